#include "relmem/catalog/executor.hpp"

#include "readonly_connection.hpp"

#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <cstring>
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

// Allows reading only. Writes, ATTACH/DETACH, PRAGMA (reads included: some have side effects),
// transactions and load_extension() are denied.
// Records whether it denied anything, so a failed prepare can be reported as a refusal.
int authorize(void* denied, int action, const char* arg1, const char* arg2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION: {
      const char* name = arg2 ? arg2 : arg1;
      if (!name || sqlite3_stricmp(name, "load_extension") != 0) return SQLITE_OK;
      break;
    }
    default:
      break;
  }
  *static_cast<bool*>(denied) = true;
  return SQLITE_DENY;
}

// Skips whitespace and SQL comments; returns the offset of the first token.
size_t skip_space_and_comments(const std::string& s, size_t i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s.compare(i, 2, "--") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) return s.size();
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i + 2);
      if (i == std::string::npos) return s.size();
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

bool starts_with_read_keyword(const std::string& sql) {
  const size_t i = skip_space_and_comments(sql, 0);
  size_t j = i;
  while (j < sql.size() && std::isalpha(static_cast<unsigned char>(sql[j]))) ++j;
  std::string word = sql.substr(i, j - i);
  for (auto& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word == "SELECT" || word == "WITH";
}

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

sqlite3* open_readonly(const std::string& db_path, std::string* error) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(readonly_uri(db_path).c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    if (error) *error = "cannot open " + db_path + ": " + (raw ? sqlite3_errmsg(raw) : "out of memory");
    sqlite3_close_v2(raw);
    return nullptr;
  }
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(raw, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_busy_timeout(raw, 2000);
  return raw;
}

QueryResult execute_readonly(const std::string& db_path, const std::string& sql, const ExecOptions& options) {
  std::string error;
  Connection db(open_readonly(db_path, &error), &sqlite3_close_v2);
  if (!db) return failure(SqlErrorKind::Open, error);
  return execute_readonly_on(db.get(), sql, options);
}

QueryResult execute_readonly_on(sqlite3* db, const std::string& sql, const ExecOptions& options) {
  bool denied = false;
  Deadline deadline{std::chrono::steady_clock::now() +
                    std::chrono::microseconds(static_cast<int64_t>(options.timeout_seconds * 1e6))};
  // Both handlers point at this frame's locals: they are removed again on every way out.
  struct Guard {
    sqlite3* db;
    ~Guard() {
      sqlite3_set_authorizer(db, nullptr, nullptr);
      sqlite3_progress_handler(db, 0, nullptr, nullptr);
    }
  } guard{db};
  sqlite3_set_authorizer(db, authorize, &denied);
  sqlite3_progress_handler(db, 1000, on_progress, &deadline);

  sqlite3_stmt* raw_stmt = nullptr;
  const char* tail = nullptr;
  const int prepare_rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &raw_stmt, &tail);
  Statement stmt(raw_stmt, &sqlite3_finalize);
  if (prepare_rc != SQLITE_OK && denied)
    return failure(SqlErrorKind::Refused, std::string("not authorized: ") + sqlite3_errmsg(db));
  if (prepare_rc != SQLITE_OK) {
    if (deadline.expired) return failure(SqlErrorKind::Timeout, "query exceeded the time limit while compiling");
    return failure(SqlErrorKind::Prepare, sqlite3_errmsg(db));
  }
  if (!stmt) return failure(SqlErrorKind::Refused, "empty statement");
  // Compiling runs nothing, so checking after prepare is safe and lets syntax errors speak for themselves.
  if (!starts_with_read_keyword(sql))
    return failure(SqlErrorKind::Refused, "only SELECT or WITH statements are executed");
  if (!only_trailing_noise(tail)) return failure(SqlErrorKind::Refused, "only one statement is executed at a time");
  if (!sqlite3_stmt_readonly(stmt.get())) return failure(SqlErrorKind::Refused, "statement is not read-only");

  QueryResult result;
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
      return failure(SqlErrorKind::Runtime, sqlite3_errmsg(db));
    }
    if (static_cast<int64_t>(result.rows.size()) >= options.max_rows) {
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
