#include "relmem/catalog/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "../common/utf8.hpp"
#include "readonly_connection.hpp"
#include "relmem/common.hpp"

namespace fs = std::filesystem;

namespace relmem {
namespace {

std::string column_text(sqlite3_stmt* stmt, int i) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
  return text ? std::string(text) : std::string();
}

bool is_database_file(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".sqlite" || ext == ".sqlite3" || ext == ".db";
}

std::string shorten(const std::string& text, int max_chars) {
  if (static_cast<int>(text.size()) <= max_chars) return text;
  size_t cut = static_cast<size_t>(max_chars);
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return text.substr(0, cut) + "...";
}

std::string table_line(const Catalog& catalog, const Schema& schema, const Table& table, const CardOptions& options) {
  std::ostringstream out;
  out << "table " << humanize_identifier(table.name) << " (";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const Column& column = table.columns[i];
    out << (i ? ", " : "") << humanize_identifier(column.name);
    if (!column.type.empty()) out << ' ' << humanize_identifier(column.type);
    if (column.primary_key) out << " primary key";
    if (options.samples_per_column > 0 && is_text_type(column.type) && table.row_count > 0) {
      const auto samples = catalog.distinct_values(schema.name, table.name, column.name, options.samples_per_column);
      std::string shown;
      for (const auto& value : samples) {
        if (!std::holds_alternative<std::string>(value)) continue;
        shown += (shown.empty() ? "" : ", ") + shorten(std::get<std::string>(value), options.max_value_chars);
      }
      if (!shown.empty()) out << " [e.g. " << shown << "]";
    }
  }
  out << ")";
  return out.str();
}

// Names reach prompts, JSON files and Python strings, which all need UTF-8: a database whose names are not UTF-8
// is refused with the name's place, never read with names that cannot be shown or saved.
void check_name(const std::string& what, const std::string& name) {
  if (!is_valid_utf8(name))
    throw Error(what + " '" + valid_utf8(name) + "' is not valid UTF-8 (" + describe_invalid_utf8(name) +
                "); rename it to read this database");
}

void check_names(const Schema& schema) {
  for (const auto& table : schema.tables) {
    check_name("table name", table.name);
    for (const auto& column : table.columns) {
      check_name("column name in table " + valid_utf8(table.name) + ":", column.name);
      check_name("type of column " + valid_utf8(table.name) + "." + valid_utf8(column.name) + ":", column.type);
    }
  }
}

}  // namespace

Schema read_schema(const std::string& path) {
  ReadonlyConnection connection(path);
  Schema schema;
  schema.name = fs::path(path).stem().string();
  schema.path = path;
  try {
    connection.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
        [&](sqlite3_stmt* stmt) { schema.tables.push_back(Table{column_text(stmt, 0), {}, {}, 0}); });
    for (auto& table : schema.tables) {
      const std::string quoted = quote_identifier(table.name);
      connection.query("SELECT name, type, \"notnull\", pk FROM pragma_table_info(" + quote_string(table.name) + ")",
                       [&](sqlite3_stmt* stmt) {
                         table.columns.push_back(Column{column_text(stmt, 0), column_text(stmt, 1),
                                                        sqlite3_column_int(stmt, 3) > 0,
                                                        sqlite3_column_int(stmt, 2) != 0});
                       });
      connection.query("PRAGMA foreign_key_list(" + quoted + ")", [&](sqlite3_stmt* stmt) {
        table.foreign_keys.push_back(ForeignKey{column_text(stmt, 3), column_text(stmt, 2), column_text(stmt, 4)});
      });
      connection.query("SELECT count(*) FROM " + quoted,
                       [&](sqlite3_stmt* stmt) { table.row_count = sqlite3_column_int64(stmt, 0); });
    }
  } catch (const DatabaseLocked&) {
    throw;
  } catch (const Error& e) {
    throw Error("not a readable SQLite database: " + std::string(e.what()));
  }
  check_names(schema);
  return schema;
}

namespace {
std::string quote_with(const std::string& text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    out += c;
    if (c == quote) out += c;
  }
  return out + quote;
}
}  // namespace

std::string quote_identifier(const std::string& name) { return quote_with(name, '"'); }
std::string quote_string(const std::string& text) { return quote_with(text, '\''); }

std::string humanize_identifier(const std::string& identifier) {
  std::string out;
  for (size_t i = 0; i < identifier.size(); ++i) {
    const unsigned char c = identifier[i];
    const bool boundary = i > 0 && std::isupper(c) && std::islower(static_cast<unsigned char>(identifier[i - 1]));
    if (c == '_' || c == '-' || c == ' ' || boundary) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      if (boundary) out += static_cast<char>(std::tolower(c));
    } else {
      out += static_cast<char>(std::tolower(c));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

Catalog Catalog::open(const std::string& path) {
  if (!fs::exists(path)) throw Error("no such file or folder: " + path);
  if (!fs::is_directory(path)) return open_files({path});
  std::vector<std::string> files;
  Catalog catalog;
  std::error_code error;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, error), end;
       !error && it != end; it.increment(error)) {
    if (!is_database_file(it->path())) continue;
    std::error_code ignored;
    if (it->is_regular_file(ignored)) {
      files.push_back(it->path().string());
    } else if (it->is_directory(ignored)) {
      catalog.skipped_.push_back({it->path().string(), "a folder, not a database file"});
    }
  }
  if (error) throw Error("cannot list the folder " + path + ": " + error.message());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    try {
      catalog.add(file);
    } catch (const Error& e) {
      catalog.skipped_.push_back({file, e.what()});
    }
  }
  return catalog;
}

Catalog Catalog::open_files(const std::vector<std::string>& paths) {
  Catalog catalog;
  for (const auto& path : paths) catalog.add(path);
  return catalog;
}

void Catalog::add(const std::string& path) {
  check_name("database file name", fs::path(path).filename().string());
  Schema schema = read_schema(path);
  if (schemas_.count(schema.name))
    throw Error("duplicate database name '" + schema.name + "': " + path + " and " + schemas_.at(schema.name).path);
  schemas_.emplace(schema.name, std::move(schema));
}

bool Catalog::remove(const std::string& db) { return schemas_.erase(db) > 0; }

std::vector<std::string> Catalog::databases() const {
  std::vector<std::string> names;
  for (const auto& [name, _] : schemas_) names.push_back(name);
  return names;
}

bool Catalog::contains(const std::string& db) const { return schemas_.count(db) > 0; }

const Schema& Catalog::schema(const std::string& db) const {
  auto it = schemas_.find(db);
  if (it == schemas_.end()) throw Error("unknown database '" + db + "'");
  return it->second;
}

const std::string& Catalog::path(const std::string& db) const { return schema(db).path; }

std::string Catalog::ddl(const std::string& db) const {
  const Schema& s = schema(db);
  std::ostringstream out;
  for (const auto& table : s.tables) {
    out << "CREATE TABLE " << quote_identifier(table.name) << " (\n";
    std::vector<std::string> lines;
    std::vector<std::string> keys;
    for (const auto& column : table.columns) {
      std::string line = "  " + quote_identifier(column.name);
      if (!column.type.empty()) line += " " + column.type;
      if (column.not_null) line += " NOT NULL";
      lines.push_back(line);
      if (column.primary_key) keys.push_back(quote_identifier(column.name));
    }
    if (!keys.empty()) {
      std::string line = "  PRIMARY KEY (";
      for (size_t i = 0; i < keys.size(); ++i) line += (i ? ", " : "") + keys[i];
      lines.push_back(line + ")");
    }
    for (const auto& fk : table.foreign_keys) {
      std::string line = "  FOREIGN KEY (" + quote_identifier(fk.from_column) + ") REFERENCES " +
                         quote_identifier(fk.to_table);
      if (!fk.to_column.empty()) line += " (" + quote_identifier(fk.to_column) + ")";
      lines.push_back(line);
    }
    for (size_t i = 0; i < lines.size(); ++i) out << lines[i] << (i + 1 < lines.size() ? ",\n" : "\n");
    out << ");\n";
  }
  return out.str();
}

std::string Catalog::card(const std::string& db, const CardOptions& options) const {
  const Schema& s = schema(db);
  std::ostringstream out;
  out << "database " << humanize_identifier(s.name) << "\n";
  if (!options.description.empty()) out << options.description << "\n";
  for (const auto& table : s.tables) out << table_line(*this, s, table, options) << "\n";
  std::string links;
  for (const auto& table : s.tables)
    for (const auto& fk : table.foreign_keys)
      links += (links.empty() ? "" : ", ") + humanize_identifier(table.name) + "." + humanize_identifier(fk.from_column) + " -> " +
               humanize_identifier(fk.to_table) + (fk.to_column.empty() ? "" : "." + humanize_identifier(fk.to_column));
  if (!links.empty()) out << "foreign keys: " << links << "\n";
  return out.str();
}

std::string Catalog::table_card(const std::string& db, const std::string& table_name, const CardOptions& options) const {
  const Schema& s = schema(db);
  const Table* table = s.table(table_name);
  if (!table) throw Error("unknown table '" + table_name + "' in database '" + db + "'");
  return table_line(*this, s, *table, options) + "\n";
}

std::vector<Value> Catalog::distinct_values(const std::string& db, const std::string& table_name,
                                            const std::string& column_name, int64_t cap) const {
  const Schema& s = schema(db);
  const Table* table = s.table(table_name);
  if (!table) throw Error("unknown table '" + table_name + "' in database '" + db + "'");
  const Column* column = table->column(column_name);
  if (!column) throw Error("unknown column '" + column_name + "' in " + db + "." + table_name);
  const std::string c = quote_identifier(column->name);
  const std::string sql = "SELECT " + c + ", count(*) AS n FROM " + quote_identifier(table->name) + " WHERE " + c +
                          " IS NOT NULL GROUP BY " + c + " ORDER BY n DESC, " + c + " LIMIT " + std::to_string(cap);
  QueryResult result = execute_readonly(s.path, sql, ExecOptions{60.0, cap});
  if (!result.ok()) throw Error("reading values of " + db + "." + table_name + "." + column_name + ": " + result.error->message);
  std::vector<Value> values;
  values.reserve(result.rows.size());
  for (auto& row : result.rows) values.push_back(std::move(row[0]));
  return values;
}

QueryResult Catalog::execute(const std::string& db, const std::string& sql, const ExecOptions& options) const {
  return execute_readonly(schema(db).path, sql, options);
}

}  // namespace relmem
