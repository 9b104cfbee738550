#pragma once
// Read-only execution of one SELECT/WITH statement against a SQLite file.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

struct sqlite3;

namespace relmem {

struct Blob {
  std::vector<uint8_t> bytes;
};
using Value = std::variant<std::monostate, int64_t, double, std::string, Blob>;

std::string value_to_string(const Value& value);

enum class SqlErrorKind {
  Refused,   // not a single read-only statement, or the authorizer denied an action
  Prepare,   // SQLite could not compile it: syntax, unknown table or column...
  Runtime,   // failed while stepping
  Timeout,   // ran past the time limit
  TooLarge,  // the result, or one value in it, is larger than the byte limit
  Open,      // the database could not be opened
};
std::string sql_error_kind_name(SqlErrorKind kind);

struct SqlError {
  SqlErrorKind kind;
  std::string message;  // SQLite's own message where it has one; fed back to the LLM for self-correction
};

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
  bool truncated = false;  // more rows existed than max_rows
  std::optional<SqlError> error;
  bool ok() const { return !error.has_value(); }
};

struct ExecOptions {
  double timeout_seconds = 10.0;
  int64_t max_rows = 10000;
  // The result's size: text and blob bytes plus 8 per other value. Also SQLite's limit on one value
  // (SQLITE_LIMIT_LENGTH), so no single function call can build a larger string or blob.
  int64_t max_bytes = int64_t{64} << 20;
};

// Runs one read-only statement: the file opened with mode=ro (immutable=1 for a WAL database without a -wal file,
// so that reading leaves no -wal or -shm behind), the SQL checked as text (UTF-8, no NUL byte, one SELECT/WITH
// statement), every non-read action and function with side effects (load_extension, fts3_tokenizer) denied by the
// authorizer, the time limit kept by a watchdog thread that interrupts SQLite, quadratic built-in functions
// replaced by bounded ones, rows capped (truncated) and bytes capped (an error). Never throws for SQL problems:
// they come back in QueryResult::error.
QueryResult execute_readonly(const std::string& db_path, const std::string& sql, const ExecOptions& options = {});

// The two halves of execute_readonly, for relmem's own code that adds virtual tables and functions to the
// connection before running generated SQL on it (hybrid queries). open_readonly: mode=ro, extensions off, no
// ATTACH, defensive; nullptr (and `error` set) when the file cannot be opened; close with sqlite3_close_v2.
// execute_readonly_on: the same checks, authorizer, time limit and row cap, removed again when it returns.
sqlite3* open_readonly(const std::string& db_path, std::string* error = nullptr);
QueryResult execute_readonly_on(sqlite3* db, const std::string& sql, const ExecOptions& options = {});

}  // namespace relmem
