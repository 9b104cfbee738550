#pragma once
// Schema model of one SQLite database, read from sqlite_master and the table_info/foreign_key_list pragmas.
#include <cstdint>
#include <string>
#include <vector>

namespace relmem {

struct Column {
  std::string name;
  std::string type;  // declared type, as written in CREATE TABLE (may be empty)
  bool primary_key = false;
  bool not_null = false;
};

struct ForeignKey {
  std::string from_column;
  std::string to_table;
  std::string to_column;  // empty when the reference names the target's primary key implicitly
};

struct Table {
  std::string name;
  std::vector<Column> columns;
  std::vector<ForeignKey> foreign_keys;
  int64_t row_count = 0;

  const Column* column(const std::string& name) const;  // case-insensitive; nullptr when absent
};

// The column of `target` that `key` references: the one it names, else target's primary key when that is one column;
// "" when neither.
std::string referenced_column(const ForeignKey& key, const Table& target);

struct Schema {
  std::string name;  // database name: the file name without extension
  std::string path;
  std::vector<Table> tables;

  const Table* table(const std::string& name) const;  // case-insensitive; nullptr when absent
};

// True when a declared type has SQLite's TEXT affinity (or no type, which stores what it is given).
bool is_text_type(const std::string& declared_type);
// True for INTEGER/REAL/NUMERIC affinity.
bool is_numeric_type(const std::string& declared_type);

}  // namespace relmem
