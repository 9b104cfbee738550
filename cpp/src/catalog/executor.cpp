#include "relmem/catalog/executor.hpp"

#include "readonly_connection.hpp"
#include "statement_keyword.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <sstream>

namespace relmem {
namespace {

struct Deadline {
  std::chrono::steady_clock::time_point end;
  bool expired = false;
};

int on_progress(void* user) {
  auto* deadline = static_cast<Deadline*>(user);
  if (std::chrono::steady_clock::now() >= deadline->end) deadline->expired = true;
  return deadline->expired ? 1 : 0;
}

// The first action the authorizer denied: what the refusal message names.
struct Denial {
  bool denied = false;
  int action = 0;
  std::string argument;  // the table, pragma or function the action names
};

// Allows reading only. Writes, ATTACH/DETACH, PRAGMA (reads included: some have side effects),
// transactions and load_extension() are denied.
// Records the first denied action, so a failed prepare can be reported as a refusal that says what was refused.
int authorize(void* user, int action, const char* arg1, const char* arg2, const char*, const char*) {
  const char* argument = arg1;
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      argument = arg2 ? arg2 : arg1;
      if (!argument || sqlite3_stricmp(argument, "load_extension") != 0) return SQLITE_OK;
      break;
    default:
      break;
  }
  auto* denial = static_cast<Denial*>(user);
  if (!denial->denied) *denial = Denial{true, action, argument ? argument : ""};
  return SQLITE_DENY;
}

// What a denied action does, for "... and this one <does it>".
std::string denied_action(const Denial& denial) {
  const std::string& name = denial.argument;
  switch (denial.action) {
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
      return "writes to table " + name;
    case SQLITE_DELETE:
      return "deletes from table " + name;
    case SQLITE_FUNCTION:
      return "calls " + name + "()";
    case SQLITE_PRAGMA:
      return "runs PRAGMA " + name;
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return "attaches or detaches a database";
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
      return "controls a transaction";
    default:
      return "does more than read (SQLite authorizer action " + std::to_string(denial.action) + ")";
  }
}

constexpr const char* kOnlyOneSelect = "only one SELECT or WITH ... SELECT statement may run";

bool only_trailing_noise(const char* tail) {
  std::string rest(tail ? tail : "");
  size_t i = 0;
  while (true) {
    i = skip_space_and_comments(rest, i);
    if (i < rest.size() && rest[i] == ';') {
      ++i;
      continue;
    }
    return i >= rest.size();
  }
}

Value read_column(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER:
      return static_cast<int64_t>(sqlite3_column_int64(stmt, i));
    case SQLITE_FLOAT:
      return sqlite3_column_double(stmt, i);
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, i)));
    }
    case SQLITE_BLOB: {
      const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt, i));
      Blob blob;
      blob.bytes.assign(data, data + sqlite3_column_bytes(stmt, i));
      return blob;
    }
    default:
      return std::monostate{};
  }
}

QueryResult failure(SqlErrorKind kind, std::string message) {
  QueryResult result;
  result.error = SqlError{kind, std::move(message)};
  return result;
}

QueryResult refused_statement(const std::string& keyword) {
  return failure(SqlErrorKind::Refused, std::string(kOnlyOneSelect) + ", not " + (keyword.empty() ? "this" : keyword));
}

int64_t row_bytes(sqlite3_stmt* stmt, int n_columns) {
  int64_t bytes = 0;
  for (int i = 0; i < n_columns; ++i) {
    const int type = sqlite3_column_type(stmt, i);
    bytes += (type == SQLITE_TEXT || type == SQLITE_BLOB) ? sqlite3_column_bytes(stmt, i) : 8;
  }
  return bytes;
}

using Connection = std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)>;
using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

}  // namespace

std::string value_to_string(const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return "NULL";
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&value)) {
    std::ostringstream out;
    out.precision(15);
    out << *d;
    return out.str();
  }
  if (auto* s = std::get_if<std::string>(&value)) return *s;
  return "<blob " + std::to_string(std::get<Blob>(value).bytes.size()) + " bytes>";
}

std::string sql_error_kind_name(SqlErrorKind kind) {
  switch (kind) {
    case SqlErrorKind::Refused: return "refused";
    case SqlErrorKind::Prepare: return "prepare";
    case SqlErrorKind::Runtime: return "runtime";
    case SqlErrorKind::Timeout: return "timeout";
    case SqlErrorKind::Open: return "open";
  }
  return "unknown";
}

QueryResult execute_readonly(const std::string& db_path, const std::string& sql, const ExecOptions& options) {
  sqlite3* raw = nullptr;
  const int open_rc = sqlite3_open_v2(readonly_uri(db_path).c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  Connection db(raw, &sqlite3_close_v2);
  if (open_rc != SQLITE_OK)
    return failure(SqlErrorKind::Open, "cannot open " + db_path + ": " + (raw ? sqlite3_errmsg(raw) : "out of memory"));

  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(db.get(), SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db.get(), SQLITE_LIMIT_LENGTH,
                static_cast<int>(std::clamp<int64_t>(options.max_bytes, 1, std::numeric_limits<int>::max())));
  sqlite3_busy_timeout(db.get(), 2000);
  Denial denial;
  sqlite3_set_authorizer(db.get(), authorize, &denial);

  Deadline deadline{std::chrono::steady_clock::now() +
                    std::chrono::microseconds(static_cast<int64_t>(options.timeout_seconds * 1e6))};
  sqlite3_progress_handler(db.get(), 1000, on_progress, &deadline);

  sqlite3_stmt* raw_stmt = nullptr;
  const char* tail = nullptr;
  const int prepare_rc = sqlite3_prepare_v2(db.get(), sql.c_str(), static_cast<int>(sql.size()), &raw_stmt, &tail);
  Statement stmt(raw_stmt, &sqlite3_finalize);
  // Compiling runs nothing, so every check can wait for SQLite's verdict; a write to a missing table is still
  // refused as a write, while a misspelt SELECT keeps its syntax error for self-correction.
  const std::string keyword = statement_keyword(sql);
  if (prepare_rc != SQLITE_OK && is_other_statement_keyword(keyword)) return refused_statement(keyword);
  if (prepare_rc != SQLITE_OK && denial.denied)
    return failure(SqlErrorKind::Refused, "a statement may only read data, and this one " + denied_action(denial));
  if (prepare_rc != SQLITE_OK) {
    if (deadline.expired) return failure(SqlErrorKind::Timeout, "query exceeded the time limit while compiling");
    return failure(SqlErrorKind::Prepare, sqlite3_errmsg(db.get()));
  }
  if (!stmt) return failure(SqlErrorKind::Refused, "the SQL is empty");
  if (keyword != "SELECT") return refused_statement(keyword);
  if (!only_trailing_noise(tail))
    return failure(SqlErrorKind::Refused, std::string(kOnlyOneSelect) + ", and this text holds more than one");
  if (!sqlite3_stmt_readonly(stmt.get())) return failure(SqlErrorKind::Refused, "the statement is not read-only");

  QueryResult result;
  int64_t bytes = 0;
  const int n_columns = sqlite3_column_count(stmt.get());
  for (int i = 0; i < n_columns; ++i) {
    const char* name = sqlite3_column_name(stmt.get(), i);
    result.columns.emplace_back(name ? name : "");
  }
  while (true) {
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      if (deadline.expired)
        return failure(SqlErrorKind::Timeout,
                       "query exceeded the time limit of " + std::to_string(options.timeout_seconds) + " s");
      return failure(SqlErrorKind::Runtime, sqlite3_errmsg(db.get()));
    }
    bytes += row_bytes(stmt.get(), n_columns);
    if (static_cast<int64_t>(result.rows.size()) >= options.max_rows || bytes > options.max_bytes) {
      result.truncated = true;
      break;
    }
    std::vector<Value> row;
    row.reserve(n_columns);
    for (int i = 0; i < n_columns; ++i) row.push_back(read_column(stmt.get(), i));
    result.rows.push_back(std::move(row));
  }
  return result;
}

}  // namespace relmem
