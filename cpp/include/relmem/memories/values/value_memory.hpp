#pragma once
// Data value memory: per database and column, the distinct stored text values (lexical structures + encoder
// vectors) and the range of numeric and date columns. Maps how a question or a SQL literal writes a value
// ("Los Angeles") to how the database stores it ('LA').
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "relmem/catalog/catalog.hpp"
#include "relmem/encoders/encoder.hpp"
#include "relmem/memories/memory_refresh.hpp"
#include "relmem/memories/values/value_aliases.hpp"
#include "relmem/memories/text/question_spans.hpp"
#include "relmem/memories/values/value_scoring.hpp"
#include "relmem/memories/values/value_store.hpp"

namespace relmem {

struct ValueCandidate {
  std::string value;
  double score = 0;
  MatchComponents components;
  std::string table;
  std::string column;
  // Why it matched: "alias" (learned), a meaning channel ("country", "us_state", "gender", "boolean", "month",
  // "unit", "wordnet"), or the kind of spelling evidence (see evidence_name).
  std::string channel;
};

// A question span that matches a stored value somewhere in the database.
struct ValueLink {
  std::string span;  // as written in the question
  size_t start = 0;  // byte offsets into the question
  size_t end = 0;
  ValueCandidate match;
};

struct LinkOptions {
  int k = 10;  // links returned, best first
  // Weaker matches are left out. On Spider dev questions 0.85 found as many gold values as 0.8 (87.8%) with 1.2
  // instead of 1.8 links per question: between the two lie partial matches ("International" / "Logan International").
  double min_score = 0.85;
  int max_span_words = 5;
  int candidates_per_span = 20;  // semantic neighbours considered per span
};

struct MemoryUsage {
  size_t string_bytes = 0;   // stored values and their normalized forms
  size_t lexical_bytes = 0;  // trigram sets, posting lists, key maps
  size_t vector_bytes = 0;   // encoder vectors
  size_t total() const { return string_bytes + lexical_bytes + vector_bytes; }
};

// Safe to update while it answers: add_database, refresh and remove_database replace a database's values whole
// (copy-on-write); every reader works on a snapshot of the databases it reads, so an update never changes or frees
// values under a running lookup, and a long lookup never holds up an update (the lock guards only the map).
// Learned aliases have their own lock. Changing weights() while other threads read is not safe.
class ValueMemory {
 public:
  ValueMemory(std::shared_ptr<const Encoder> encoder, ValueMemoryOptions options = {});
  ValueMemory(ValueMemory&&) = default;
  ValueMemory& operator=(ValueMemory&&) = default;
  ValueMemory(const ValueMemory&) = delete;
  ValueMemory& operator=(const ValueMemory&) = delete;

  static ValueMemory build(const Catalog& catalog, std::shared_ptr<const Encoder> encoder,
                           const ValueMemoryOptions& options = {}, const BuildProgress& progress = {});
  // Rebuilds the databases whose file changed (size or modification time), adds new ones, drops missing ones.
  RefreshReport refresh(const Catalog& catalog, const BuildProgress& progress = {});
  // (Re)indexes one database of the catalog.
  void add_database(const Catalog& catalog, const std::string& db);
  bool remove_database(const std::string& db);

  // Best stored values of one column for a written value. Empty for columns without indexed text.
  std::vector<ValueCandidate> lookup(const std::string& db, const std::string& table, const std::string& column,
                                     const std::string& value, int k = 10) const;
  // Question spans (word n-grams, and quoted phrases) that match stored values anywhere in the database: by spelling,
  // the encoder, concepts and learned aliases, but by initials and prefixes only where the span reads as a name, and
  // never by WordNet synonyms (most question words are no value: value_memory.cpp says what this was measured on).
  std::vector<ValueLink> link(const std::string& db, const std::string& question,
                              const LinkOptions& options = {}) const;
  // link() in each of several databases, encoding the question's spans once; one list per database, in order.
  // Spans are encoded only when options.min_score <= weights().semantic (else the links' semantic is unset).
  std::vector<std::vector<ValueLink>> link_all(const std::vector<std::string>& dbs, const std::string& question,
                                               const LinkOptions& options = {}) const;

  // Learned aliases (value_aliases.hpp): a lookup of `written` in that column returns `stored` first. The column
  // must hold `stored` among its indexed values; confirming an alias again counts a use.
  ValueAlias add_alias(const std::string& db, const std::string& table, const std::string& column,
                       const std::string& written, const std::string& stored, const std::string& source,
                       const std::string& evidence = "");
  bool remove_alias(const std::string& db, const std::string& table, const std::string& column,
                    const std::string& written);
  std::vector<ValueAlias> aliases(const std::string& db = "", const std::string& table = "",
                                  const std::string& column = "") const;
  // Writes only the aliases file of a saved memory's folder (save() writes it too).
  void save_aliases(const std::string& folder) const;

  // Saves into a folder: manifest.json plus one values file and one vectors file per database, and aliases.json.
  void save(const std::string& folder) const;
  // `encoder` may be null: the one named in the manifest is loaded. A different encoder is an error.
  static ValueMemory load(const std::string& folder, std::shared_ptr<const Encoder> encoder = nullptr);

  std::vector<std::string> databases() const;
  bool contains(const std::string& db) const;
  // The database's values as they are now; the snapshot stays valid while other threads update the memory.
  // database() throws for a database the memory does not hold, find_database() returns nullptr.
  std::shared_ptr<const DatabaseValues> database(const std::string& db) const;
  std::shared_ptr<const DatabaseValues> find_database(const std::string& db) const;
  // nullptr when the database or column is unknown to the memory (names compare case-insensitively). The pointer
  // is into the database's current values: where other threads may update the memory, hold find_database(db) and
  // ask it find_column() instead.
  const ColumnValues* column(const std::string& db, const std::string& table, const std::string& column) const;

  MemoryUsage memory_usage() const;
  const Encoder& encoder() const { return *encoder_; }
  std::shared_ptr<const Encoder> shared_encoder() const { return encoder_; }
  const ValueMemoryOptions& options() const { return options_; }
  FusionWeights& weights() { return weights_; }
  const FusionWeights& weights() const { return weights_; }

 private:
  // link() in one database from the question's spans, their texts, (when they were encoded) vectors and whether
  // each reads as a name (is_proper_name: initials and prefixes link it; value_memory.cpp says why).
  std::vector<ValueLink> link_spans(const DatabaseValues& d, const std::vector<QuestionSpan>& spans,
                                    const std::vector<std::string>& texts, const RowMatrix& span_vectors,
                                    const std::vector<bool>& named, const LinkOptions& options) const;

  using Databases = std::map<std::string, std::shared_ptr<const DatabaseValues>>;
  Databases snapshot() const;  // every database's current values

  std::shared_ptr<const Encoder> encoder_;
  ValueMemoryOptions options_;
  FusionWeights weights_;
  Databases databases_;
  std::unique_ptr<std::shared_mutex> lock_ = std::make_unique<std::shared_mutex>();  // guards databases_
  ValueAliases aliases_;
};

}  // namespace relmem
