#pragma once
// Private to evaluation/: read-only lookups in an original database for the oracle filler.
#include <sqlite3.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/evaluation/oracle_filler.hpp"

namespace relmem::evaluation {

struct ForeignKey {
  std::string table;   // referenced table
  std::string column;  // referenced column (its primary key when the declaration names none)
};

// A dropped column or relation an SQL function's instruction may be about (see oracle_functions.cpp).
struct OracleTarget {
  std::string table;     // where the value is stored in the original
  std::string column;    // empty for relations
  std::string relation;  // empty for columns
  std::string meaning;
  std::string via;       // the identified table, when `table` references it (one foreign-key hop)
  std::string via_column, referenced_column;  // table.via_column = via.referenced_column
};

struct OracleChoice {
  std::optional<OracleTarget> target;  // none: the instruction is about no dropped column of the table
  std::string mentioned;               // the value a yes/no instruction names ("Blue"), if any
};

class OracleDatabase {
 public:
  explicit OracleDatabase(OracleSource source);
  ~OracleDatabase();
  OracleDatabase(const OracleDatabase&) = delete;
  OracleDatabase& operator=(const OracleDatabase&) = delete;

  const OracleSource& source() const { return source_; }

  mutable std::map<std::string, OracleChoice> choices;  // by instruction, table and answer spec
  sqlite3* handle() const { return db_; }

  std::string table_name(const std::string& name) const;  // as stored; empty when absent
  std::vector<std::string> columns(const std::string& table) const;
  std::string column_name(const std::string& table, const std::string& column) const;  // as stored; empty: absent
  std::string first_text_column(const std::string& table) const;
  std::optional<ForeignKey> foreign_key(const std::string& table, const std::string& column) const;

  // Rowids of `table` whose columns equal the key values ({column: value}).
  std::vector<int64_t> rows_with(const std::string& table, const nlohmann::json& key) const;
  nlohmann::json value(const std::string& table, int64_t rowid, const std::string& column) const;
  std::vector<nlohmann::json> row(const std::string& table, int64_t rowid) const;  // every column, in order
  // The value of `label_column` in the row of `table` whose `column` equals `value`.
  // The distinct values of `label_column` in the rows of `table` whose `column` equals `value` (at most `limit`).
  std::vector<nlohmann::json> lookup_distinct(const std::string& table, const std::string& column,
                                              const nlohmann::json& value, const std::string& label_column,
                                              int limit) const;
  nlohmann::json lookup(const std::string& table, const std::string& column, const nlohmann::json& value,
                        const std::string& label_column) const;
  std::vector<std::string> distinct_texts(const std::string& table, const std::string& column) const;
  // normalized value (see normalize_text) -> rowids, for the oracle's row identification.
  const std::unordered_map<std::string, std::vector<int64_t>>& value_index(const std::string& table,
                                                                           const std::string& column) const;
  // All rows as JSON arrays of the given columns, with their rowids.
  std::vector<std::pair<int64_t, std::vector<nlohmann::json>>> all_rows(const std::string& table,
                                                                        const std::vector<std::string>& columns) const;

 private:
  std::optional<ForeignKey> read_foreign_key(const std::string& table, const std::string& column) const;

  OracleSource source_;
  sqlite3* db_ = nullptr;
  mutable std::map<std::string, std::vector<std::string>> distinct_cache_;
  mutable std::map<std::string, std::vector<std::string>> columns_cache_;
  mutable std::map<std::string, std::unordered_map<std::string, std::vector<int64_t>>> index_cache_;
  mutable std::map<std::string, std::unordered_map<std::string, std::vector<int64_t>>> key_index_cache_;
  mutable std::map<std::string, std::string> table_cache_, text_column_cache_;
  mutable std::map<std::string, std::optional<ForeignKey>> foreign_key_cache_;
};

// Lowercase ASCII letters and digits, every other run of characters one space, trimmed: "3-D Man" -> "3 d man".
std::string normalize_text(const std::string& text);

nlohmann::json column_json(sqlite3_stmt* statement, int column);
void bind_json(sqlite3_stmt* statement, int index, const nlohmann::json& value);

}  // namespace relmem::evaluation
