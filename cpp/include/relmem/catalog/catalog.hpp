#pragma once
// A collection of SQLite databases opened read-only: schemas, serializers, distinct values, execution.
#include <map>
#include <string>
#include <vector>

#include "relmem/catalog/executor.hpp"
#include "relmem/catalog/schema.hpp"

namespace relmem {

struct CardOptions {
  int samples_per_column = 3;  // distinct sample values shown per text column
  int max_value_chars = 40;    // longer sample values are cut
  std::string description;     // optional user description of the database
};

class Catalog {
 public:
  Catalog() = default;
  // A folder (searched recursively for *.sqlite, *.sqlite3, *.db) or a single database file.
  static Catalog open(const std::string& path);
  static Catalog open_files(const std::vector<std::string>& paths);

  // Adds one database file; its name is the file name without extension. Throws on duplicates or bad files.
  void add(const std::string& path);
  bool remove(const std::string& db);

  std::vector<std::string> databases() const;  // sorted names
  bool contains(const std::string& db) const;
  const Schema& schema(const std::string& db) const;
  const std::string& path(const std::string& db) const;

  std::string ddl(const std::string& db) const;
  std::string card(const std::string& db, const CardOptions& options = {}) const;
  // Text card of one table (its line of card(); the database's name is in card() only), for per-table embeddings.
  std::string table_card(const std::string& db, const std::string& table, const CardOptions& options = {}) const;

  // Up to `cap` distinct non-null values of a column, most frequent first.
  std::vector<Value> distinct_values(const std::string& db, const std::string& table, const std::string& column,
                                     int64_t cap = 1000) const;

  QueryResult execute(const std::string& db, const std::string& sql, const ExecOptions& options = {}) const;

  // Files a folder scan found but could not read, with the reason; open() skips them instead of failing.
  struct Skipped {
    std::string path;
    std::string reason;
  };
  const std::vector<Skipped>& skipped() const { return skipped_; }

 private:
  std::map<std::string, Schema> schemas_;
  std::vector<Skipped> skipped_;
};

// Reads the schema of one SQLite file (read-only). Throws relmem::Error on missing, non-SQLite or corrupt files.
Schema read_schema(const std::string& path);
std::string quote_identifier(const std::string& name);
std::string quote_string(const std::string& text);
// "StadiumCapacity_2019" -> "stadium capacity 2019": identifiers read as words in cards and embedded texts.
std::string humanize_identifier(const std::string& identifier);

}  // namespace relmem
