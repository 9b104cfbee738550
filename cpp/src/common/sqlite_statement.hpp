#pragma once
// A prepared SQLite statement on relmem's own files (the response cache, the fill store) and the hybrid session's
// connection: it finalizes itself and throws relmem::Error with context.
#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "relmem/common.hpp"

namespace relmem {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& sql, std::string context) : db_(db), context_(std::move(context)) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK) fail("cannot prepare");
  }
  ~SqliteStatement() { sqlite3_finalize(statement_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind(int index, const std::string& value) {
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  }
  void bind(int index, int64_t value) { sqlite3_bind_int64(statement_, index, value); }
  void bind(int index, double value) { sqlite3_bind_double(statement_, index, value); }
  void bind_value(int index, sqlite3_value* value) { sqlite3_bind_value(statement_, index, value); }

  bool step() {  // true while a row is available
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("cannot run");
    return false;
  }
  void reset() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  int64_t integer(int column) const { return sqlite3_column_int64(statement_, column); }
  bool is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return data ? std::string(data, static_cast<size_t>(sqlite3_column_bytes(statement_, column))) : std::string();
  }
  sqlite3_stmt* handle() const { return statement_; }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(context_ + ": " + what + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::string context_;
  sqlite3_stmt* statement_ = nullptr;
};

inline void execute_sql(sqlite3* db, const std::string& sql, const std::string& context) {
  SqliteStatement statement(db, sql, context);
  while (statement.step()) {
  }
}

}  // namespace relmem
