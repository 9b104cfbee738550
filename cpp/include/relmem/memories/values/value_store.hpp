#pragma once
// The stored values of one database as the value memory keeps them, and how they are read from SQLite.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "relmem/catalog/catalog.hpp"
#include "relmem/encoders/encoder.hpp"
#include "relmem/index/vector_index.hpp"
#include "relmem/memories/memory_refresh.hpp"

namespace relmem {

// What gets indexed. The defaults index the 157 Spider databases in well under a minute on 2 cores.
struct ValueMemoryOptions {
  int64_t max_values_per_column = 10000;  // the most frequent distinct values are kept, the rest noted as truncated
  // Encoder vectors for the most frequent values, the rest lexical only. Semantic matches matter in categorical
  // columns, which are small; on Spider 200 gave the recall of 500 with 40% less build time.
  int64_t max_vectors_per_column = 200;
  // Columns where more than this share of values contain a digit (ids, codes, dates, addresses) get no vectors:
  // an encoder sees nothing in 'aaronha01' that trigrams do not.
  double max_digit_share = 0.5;
  int max_value_chars = 200;       // longer single values are not indexed
  double max_average_chars = 100;  // columns with longer values on average are free text: not indexed
  int encode_batch = 4096;
};

enum class ColumnKind {
  Text,      // distinct text values indexed (numbers stored in it also give a range)
  Numeric,   // only numbers: min/max kept
  Date,      // declared DATE/TIME/DATETIME/TIMESTAMP: min/max kept
  FreeText,  // text longer than max_average_chars on average: not indexed
  Empty,     // no non-null value, or only blobs
};
std::string column_kind_name(ColumnKind kind);
ColumnKind parse_column_kind(const std::string& name);

struct ColumnValues {
  std::string table;
  std::string column;
  std::string declared_type;
  ColumnKind kind = ColumnKind::Empty;
  int64_t text_values = 0;   // distinct text values seen (counted up to max_values_per_column + 1)
  bool truncated = false;    // more distinct text values exist than were indexed
  int64_t skipped_long = 0;  // distinct values longer than max_value_chars, not indexed
  double average_chars = 0;  // over the distinct text values read
  uint32_t first = 0;        // its indexed values are DatabaseValues::values[first, first + count)
  uint32_t count = 0;
  uint32_t vectors = 0;  // the first `vectors` of them have encoder vectors (ids first .. first + vectors)
  Value min, max;        // numeric range (Date: range of all values); monostate when none
};

struct DatabaseValues {
  std::string name;
  std::string path;
  FileStamp stamp;
  std::vector<ColumnValues> columns;
  std::vector<std::string> values;       // column by column, most frequent first; a value's position is its id
  std::vector<uint32_t> column_of;       // value id -> index into columns
  std::unique_ptr<VectorIndex> vectors;  // null when no column has vectors

  // Lexical structures, derived from `values` by index_lexical().
  std::vector<std::string> normalized;
  std::vector<uint32_t> trigram_offsets;  // trigrams of value i: trigrams[offsets[i], offsets[i + 1])
  std::vector<uint32_t> trigrams;
  std::unordered_map<uint32_t, std::vector<uint32_t>> postings;        // trigram -> value ids
  std::unordered_map<std::string, std::vector<uint32_t>> by_key;       // compact form and content key -> ids
  std::unordered_map<std::string, std::vector<uint32_t>> by_initials;  // initials of multi-word values -> ids
  std::vector<std::pair<std::string, uint32_t>> sorted_compact;        // for prefix lookups

  void index_lexical();
  std::vector<uint32_t> trigrams_of(uint32_t id) const;
  // The id of `value` (byte for byte) among the indexed values of `column`; -1 when it is not one of them.
  int64_t find_value(const ColumnValues& column, const std::string& value) const;
  // Case-insensitive; nullptr when absent.
  const ColumnValues* find_column(const std::string& table, const std::string& column) const;
  size_t string_bytes() const;
  size_t lexical_bytes() const;
  size_t vector_bytes() const;
};

// Reads the distinct values and ranges of every column of `db` (read-only), without vectors.
std::unique_ptr<DatabaseValues> read_database_values(const Catalog& catalog, const std::string& db,
                                                     const ValueMemoryOptions& options);
// Encodes the first max_vectors_per_column values of each text column (but code-like ones) into db.vectors; each
// distinct text is encoded once per database.
void encode_database_values(DatabaseValues& db, const Encoder& encoder, const ValueMemoryOptions& options);

}  // namespace relmem
