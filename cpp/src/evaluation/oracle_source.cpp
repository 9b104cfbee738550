#include "oracle_source.hpp"

#include <cctype>

#include "relmem/catalog/executor.hpp"
#include "../common/sqlite_statement.hpp"
#include "relmem/catalog/catalog.hpp"
#include "../hybrid/text.hpp"

namespace relmem::evaluation {
namespace {

using nlohmann::json;

}  // namespace

std::string normalize_text(const std::string& text) {
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      if (space && !out.empty()) out += ' ';
      out += static_cast<char>(std::tolower(c));
      space = false;
    } else {
      space = true;
    }
  }
  return out;
}

json column_json(sqlite3_stmt* statement, int column) {
  switch (sqlite3_column_type(statement, column)) {
    case SQLITE_INTEGER: return json(static_cast<int64_t>(sqlite3_column_int64(statement, column)));
    case SQLITE_FLOAT: return json(sqlite3_column_double(statement, column));
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
      return json(std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement, column))));
    }
    default: return json();
  }
}

void bind_json(sqlite3_stmt* statement, int index, const json& value) {
  if (value.is_number_integer()) sqlite3_bind_int64(statement, index, value.get<int64_t>());
  else if (value.is_number()) sqlite3_bind_double(statement, index, value.get<double>());
  else if (value.is_boolean()) sqlite3_bind_int64(statement, index, value.get<bool>() ? 1 : 0);
  else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_bind_null(statement, index);
  }
}

OracleDatabase::OracleDatabase(OracleSource source) : source_(std::move(source)) {
  std::string error;
  db_ = open_readonly(source_.path, &error);
  if (!db_) throw Error("oracle filler: " + error);
}

OracleDatabase::~OracleDatabase() { sqlite3_close_v2(db_); }

std::string OracleDatabase::table_name(const std::string& name) const {
  const auto cached = table_cache_.find(name);
  if (cached != table_cache_.end()) return cached->second;
  SqliteStatement find(db_, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                       "oracle filler");
  find.bind(1, name);
  return table_cache_[name] = find.step() ? find.text(0) : std::string();
}

std::vector<std::string> OracleDatabase::columns(const std::string& table) const {
  auto it = columns_cache_.find(table);
  if (it != columns_cache_.end()) return it->second;
  SqliteStatement info(db_, "SELECT name FROM pragma_table_info(?)", "oracle filler");
  info.bind(1, table);
  std::vector<std::string> out;
  while (info.step()) out.push_back(info.text(0));
  return columns_cache_.emplace(table, std::move(out)).first->second;
}

std::string OracleDatabase::column_name(const std::string& table, const std::string& column) const {
  for (const auto& name : columns(table))
    if (to_lower(name) == to_lower(column)) return name;
  return "";
}

std::string OracleDatabase::first_text_column(const std::string& table) const {
  const auto cached = text_column_cache_.find(table);
  if (cached != text_column_cache_.end()) return cached->second;
  SqliteStatement info(db_, "SELECT name, type FROM pragma_table_info(?)", "oracle filler");
  info.bind(1, table);
  std::string found;
  while (found.empty() && info.step())
    if (to_lower(info.text(1)).find("text") != std::string::npos || to_lower(info.text(1)).find("char") != std::string::npos)
      found = info.text(0);
  return text_column_cache_[table] = found;
}

std::optional<ForeignKey> OracleDatabase::foreign_key(const std::string& table, const std::string& column) const {
  const std::string id = to_lower(table) + "\x1f" + to_lower(column);
  const auto cached = foreign_key_cache_.find(id);
  if (cached != foreign_key_cache_.end()) return cached->second;
  return foreign_key_cache_[id] = read_foreign_key(table, column);
}

std::optional<ForeignKey> OracleDatabase::read_foreign_key(const std::string& table, const std::string& column) const {
  SqliteStatement list(db_, "SELECT \"table\", \"to\", \"from\" FROM pragma_foreign_key_list(?)", "oracle filler");
  list.bind(1, table);
  while (list.step()) {
    if (to_lower(list.text(2)) != to_lower(column)) continue;
    ForeignKey key{table_name(list.text(0)), list.is_null(1) ? std::string() : list.text(1)};
    if (key.table.empty()) return std::nullopt;
    if (key.column.empty()) {
      SqliteStatement pk(db_, "SELECT name FROM pragma_table_info(?) WHERE pk = 1", "oracle filler");
      pk.bind(1, key.table);
      key.column = pk.step() ? pk.text(0) : "rowid";
    }
    return key;
  }
  return std::nullopt;
}

std::vector<int64_t> OracleDatabase::rows_with(const std::string& table, const json& key) const {
  // One scan per table and key columns builds an index: requests ask about many rows of few tables.
  std::vector<std::string> columns;
  for (auto it = key.begin(); it != key.end(); ++it) {
    columns.push_back(column_name(table, it.key()));
    if (columns.back().empty()) return {};
  }
  std::string id = table;
  for (const auto& c : columns) id += "\x1f" + c;
  auto index = key_index_cache_.find(id);
  if (index == key_index_cache_.end()) {
    std::unordered_map<std::string, std::vector<int64_t>> built;
    for (const auto& [rowid, values] : all_rows(table, columns)) built[json(values).dump()].push_back(rowid);
    index = key_index_cache_.emplace(id, std::move(built)).first;
  }
  json values = json::array();
  for (auto it = key.begin(); it != key.end(); ++it) values.push_back(it.value());
  const auto found = index->second.find(values.dump());
  return found == index->second.end() ? std::vector<int64_t>{} : found->second;
}

json OracleDatabase::value(const std::string& table, int64_t rowid, const std::string& column) const {
  SqliteStatement select(db_, "SELECT " + quote_identifier(column) + " FROM " + quote_identifier(table) +
                                  " WHERE rowid = ?", "oracle filler");
  select.bind(1, rowid);
  return select.step() ? column_json(select.handle(), 0) : json();
}

std::vector<json> OracleDatabase::row(const std::string& table, int64_t rowid) const {
  SqliteStatement select(db_, "SELECT * FROM " + quote_identifier(table) + " WHERE rowid = ?", "oracle filler");
  select.bind(1, rowid);
  std::vector<json> out;
  if (select.step())
    for (int i = 0; i < sqlite3_column_count(select.handle()); ++i) out.push_back(column_json(select.handle(), i));
  return out;
}

json OracleDatabase::lookup(const std::string& table, const std::string& column, const json& value,
                            const std::string& label_column) const {
  SqliteStatement select(db_, "SELECT " + quote_identifier(label_column) + " FROM " + quote_identifier(table) +
                                  " WHERE " + quote_identifier(column) + " = ?", "oracle filler");
  bind_json(select.handle(), 1, value);
  return select.step() ? column_json(select.handle(), 0) : json();
}

std::vector<json> OracleDatabase::lookup_distinct(const std::string& table, const std::string& column,
                                                  const json& value, const std::string& label_column,
                                                  int limit) const {
  SqliteStatement select(db_, "SELECT DISTINCT " + quote_identifier(label_column) + " FROM " +
                                  quote_identifier(table) + " WHERE " + quote_identifier(column) + " = ? LIMIT " +
                                  std::to_string(limit), "oracle filler");
  bind_json(select.handle(), 1, value);
  std::vector<json> out;
  while (select.step()) out.push_back(column_json(select.handle(), 0));
  return out;
}

std::vector<std::string> OracleDatabase::distinct_texts(const std::string& table, const std::string& column) const {
  const std::string id = table + "\x1f" + column;
  auto it = distinct_cache_.find(id);
  if (it != distinct_cache_.end()) return it->second;
  SqliteStatement select(db_, "SELECT DISTINCT CAST(" + quote_identifier(column) + " AS TEXT) FROM " +
                                  quote_identifier(table) + " WHERE " + quote_identifier(column) +
                                  " IS NOT NULL ORDER BY 1 LIMIT 5000", "oracle filler");
  std::vector<std::string> out;
  while (select.step()) out.push_back(select.text(0));
  return distinct_cache_.emplace(id, std::move(out)).first->second;
}

const std::unordered_map<std::string, std::vector<int64_t>>& OracleDatabase::value_index(
    const std::string& table, const std::string& column) const {
  const std::string id = table + "\x1f" + column;
  auto it = index_cache_.find(id);
  if (it != index_cache_.end()) return it->second;
  std::unordered_map<std::string, std::vector<int64_t>> index;
  for (const auto& [rowid, values] : all_rows(table, {column})) {
    const auto& v = values[0];
    const std::string text = v.is_string() ? v.get<std::string>() : v.is_number_integer() ? std::to_string(v.get<int64_t>())
                                                                                           : v.is_null() ? "" : v.dump();
    const std::string key = normalize_text(text);
    if (!key.empty()) index[key].push_back(rowid);
  }
  return index_cache_.emplace(id, std::move(index)).first->second;
}

std::vector<std::pair<int64_t, std::vector<json>>> OracleDatabase::all_rows(
    const std::string& table, const std::vector<std::string>& columns) const {
  std::string sql = "SELECT rowid";
  for (const auto& c : columns) sql += ", " + quote_identifier(c);
  SqliteStatement select(db_, sql + " FROM " + quote_identifier(table), "oracle filler");
  std::vector<std::pair<int64_t, std::vector<json>>> out;
  while (select.step()) {
    std::vector<json> row;
    for (size_t i = 0; i < columns.size(); ++i) row.push_back(column_json(select.handle(), static_cast<int>(i) + 1));
    out.emplace_back(select.integer(0), std::move(row));
  }
  return out;
}

}  // namespace relmem::evaluation
