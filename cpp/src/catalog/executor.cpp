#include "relmem/catalog/executor.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <filesystem>
#include <memory>
#include <sstream>

#include "../common/utf8.hpp"
#include "bounded_functions.hpp"
#include "full_text_query_check.hpp"
#include "query_watchdog.hpp"
#include "readonly_connection.hpp"
#include "statement_keyword.hpp"

namespace relmem {
namespace {

// Functions that hand out process addresses, register code or load it: never callable from generated SQL.
constexpr std::array<const char*, 2> kDeniedFunctions = {"load_extension", "fts3_tokenizer"};
// Functions whose time inside one call grows faster than their input and that no replacement reaches: FTS3/4 and
// FTS5 snippet() scan a long document's phrase matches once per candidate window (FTS5: 0.09 s on a 20,000-word
// document, 290 s on a 1,000,000-word one). docs/hardening.md lists every function and its worst case.
constexpr std::array<const char*, 1> kUnboundedFunctions = {"snippet"};
// Pragmas that only describe the database, reachable from a SELECT as table-valued functions (pragma_table_info)
// and read by FTS tables (page_size, data_version); a PRAGMA statement itself is refused before it runs. The first
// list takes a table or index name as its argument, the second no argument (with one, some would set a value).
constexpr std::array<const char*, 6> kDescribingPragmas = {"table_info", "table_xinfo", "index_list",
                                                           "index_info", "index_xinfo", "foreign_key_list"};
constexpr std::array<const char*, 8> kReadablePragmas = {"data_version", "page_size",     "page_count",  "collation_list",
                                                         "table_list",   "function_list", "module_list", "pragma_list"};
constexpr int kMaxSqlBytes = 1 << 20;
constexpr int64_t kMinValueLimit = 1 << 20;  // SQLite reads schemas through the same limit on one value

// The first action the authorizer denied: what the refusal message names.
struct Denial {
  bool denied = false;
  int action = 0;
  std::string argument;  // the table, pragma or function the action names
};

template <size_t N>
bool is_one_of(const char* name, const std::array<const char*, N>& names) {
  return std::any_of(names.begin(), names.end(), [&](const char* listed) { return sqlite3_stricmp(name, listed) == 0; });
}

// Allows reading only. Writes, ATTACH/DETACH, PRAGMA (reads included: some have side effects), transactions and
// the functions of kDeniedFunctions are denied. Two internal checks are let through because reading needs them:
// a virtual table's constructor (json_each, json_tree, FTS tables, pragma table-valued functions) asks for an
// UPDATE of sqlite_master (nothing can write: the file is open read-only, SQLITE_DBCONFIG_DEFENSIVE is on and only
// a SELECT statement runs), and the descriptive pragmas above.
// Records the first denied action, so a failed prepare can be reported as a refusal that says what was refused.
int authorize(void* user, int action, const char* arg1, const char* arg2, const char*, const char*) {
  const char* argument = arg1;
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_UPDATE:
      if (arg1 && sqlite3_stricmp(arg1, "sqlite_master") == 0) return SQLITE_OK;
      break;
    case SQLITE_PRAGMA:
      if (arg1 && (is_one_of(arg1, kDescribingPragmas) || (!arg2 && is_one_of(arg1, kReadablePragmas)))) return SQLITE_OK;
      break;
    case SQLITE_FUNCTION:
      argument = arg2 ? arg2 : arg1;
      if (!argument || !(is_one_of(argument, kDeniedFunctions) || is_one_of(argument, kUnboundedFunctions)))
        return SQLITE_OK;
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
  const std::string name = valid_utf8(denial.argument);
  switch (denial.action) {
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
      return "writes to table " + name;
    case SQLITE_DELETE:
      return "deletes from table " + name;
    case SQLITE_FUNCTION:
      if (is_one_of(denial.argument.c_str(), kUnboundedFunctions))
        return "calls " + name + "(), which is not allowed (its time on a long document has no bound the time limit "
               "can keep; highlight() or substr() show a match instead)";
      return "calls " + name + "(), which is not allowed (it loads code or exposes process memory)";
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
      return std::string(text ? text : "", static_cast<size_t>(sqlite3_column_bytes(stmt, i)));
    }
    case SQLITE_BLOB: {
      const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt, i));
      Blob blob;
      if (data) blob.bytes.assign(data, data + sqlite3_column_bytes(stmt, i));
      return blob;
    }
    default:
      return std::monostate{};
  }
}

// What a value adds to the result's size: its bytes for text and blobs, 8 for anything else.
int64_t value_bytes(sqlite3_stmt* stmt, int i) {
  const int type = sqlite3_column_type(stmt, i);
  return type == SQLITE_TEXT || type == SQLITE_BLOB ? sqlite3_column_bytes(stmt, i) : 8;
}

QueryResult failure(SqlErrorKind kind, const std::string& message) {
  QueryResult result;
  result.error = SqlError{kind, valid_utf8(message)};  // messages quote names that may not be UTF-8
  return result;
}

QueryResult refused_statement(const std::string& keyword) {
  return failure(SqlErrorKind::Refused, std::string(kOnlyOneSelect) + ", not " + (keyword.empty() ? "this" : keyword));
}

// Refuses what must not reach SQLite as text: a NUL byte (SQLite would silently ignore what follows it) and
// bytes that are not UTF-8.
std::optional<QueryResult> refuse_text(const std::string& sql) {
  const size_t nul = sql.find('\0');
  if (nul != std::string::npos)
    return failure(SqlErrorKind::Refused,
                   "the SQL holds a NUL byte at offset " + std::to_string(nul) + "; SQLite would ignore what follows");
  if (!is_valid_utf8(sql)) return failure(SqlErrorKind::Refused, "the SQL is not valid UTF-8 (" + describe_invalid_utf8(sql) + ")");
  return std::nullopt;
}

std::string too_large_message(const ExecOptions& options) {
  return "result too large: more than " + std::to_string(options.max_bytes) +
         " bytes (ExecOptions::max_bytes); select fewer rows or columns, or shorter values";
}

QueryResult locked(const std::string& path, sqlite3* db) {
  return failure(SqlErrorKind::Open, path + " is locked by another connection (" + sqlite3_errmsg(db) + ")");
}

void limit_connection(sqlite3* db, const ExecOptions& options) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, kMaxSqlBytes);
  sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, 0);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, static_cast<int>(std::clamp<int64_t>(options.max_bytes, kMinValueLimit, INT_MAX)));
  sqlite3_busy_timeout(db, 2000);
}

using Connection = std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)>;
using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

// What the bounded functions of an open connection watch between two statements: nothing stops them there.
const std::atomic<bool> kNeverStopped{false};

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
    case SqlErrorKind::TooLarge: return "too_large";
    case SqlErrorKind::Open: return "open";
  }
  return "unknown";
}

sqlite3* open_readonly(const std::string& db_path, std::string* error) {
  auto fail = [&](std::string message) -> sqlite3* {
    if (error) *error = std::move(message);
    return nullptr;
  };
  std::error_code ignored;
  if (std::filesystem::is_directory(db_path, ignored))
    return fail("cannot open " + db_path + ": it is a folder, not a database file");
  if (!std::filesystem::exists(db_path, ignored)) return fail("no such database file: " + db_path);
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(readonly_uri(db_path).c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    std::string message = "cannot open " + db_path + ": " + (raw ? sqlite3_errmsg(raw) : "out of memory");
    sqlite3_close_v2(raw);
    return fail(std::move(message));
  }
  limit_connection(raw, ExecOptions{});
  install_bounded_functions(raw, &kNeverStopped);
  return raw;
}

QueryResult execute_readonly(const std::string& db_path, const std::string& sql, const ExecOptions& options) {
  if (auto refusal = refuse_text(sql)) return *refusal;
  std::string error;
  Connection db(open_readonly(db_path, &error), &sqlite3_close_v2);
  if (!db) return failure(SqlErrorKind::Open, error);
  return execute_readonly_on(db.get(), sql, options);
}

QueryResult execute_readonly_on(sqlite3* db, const std::string& sql, const ExecOptions& options) {
  if (auto refusal = refuse_text(sql)) return *refusal;
  const char* file = sqlite3_db_filename(db, "main");
  const std::string db_path = file ? file : "the database";
  limit_connection(db, options);
  Denial denial;
  // The authorizer and the bounded functions point at this frame's locals: both are reset on every way out.
  struct Reset {
    sqlite3* db;
    ~Reset() {
      sqlite3_set_authorizer(db, nullptr, nullptr);
      install_bounded_functions(db, &kNeverStopped);
    }
  } reset{db};
  sqlite3_set_authorizer(db, authorize, &denial);
  QueryWatchdog watchdog(db, options.timeout_seconds);
  install_bounded_functions(db, &watchdog.expired_flag());
  const std::string time_limit = "query exceeded the time limit of " + std::to_string(options.timeout_seconds) + " s";

  sqlite3_stmt* raw_stmt = nullptr;
  const char* tail = nullptr;
  const int prepare_rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &raw_stmt, &tail);
  Statement stmt(raw_stmt, &sqlite3_finalize);
  // Compiling runs nothing, so every check can wait for SQLite's verdict; a write to a missing table is still
  // refused as a write, while a misspelt SELECT keeps its syntax error for self-correction.
  const std::string keyword = statement_keyword(sql);
  if (prepare_rc != SQLITE_OK && is_other_statement_keyword(keyword)) return refused_statement(keyword);
  if (prepare_rc != SQLITE_OK && denial.denied)
    return failure(SqlErrorKind::Refused, "a statement may only read data, and this one " + denied_action(denial));
  if (prepare_rc != SQLITE_OK) {
    if (watchdog.expired()) return failure(SqlErrorKind::Timeout, time_limit + " while compiling");
    if ((prepare_rc & 0xFF) == SQLITE_BUSY || (prepare_rc & 0xFF) == SQLITE_LOCKED) return locked(db_path, db);
    if (prepare_rc == SQLITE_TOOBIG) return failure(SqlErrorKind::TooLarge, std::string("the SQL is too long: ") + sqlite3_errmsg(db));
    return failure(SqlErrorKind::Prepare, sqlite3_errmsg(db));
  }
  if (!stmt) return failure(SqlErrorKind::Refused, "the SQL is empty");
  if (keyword != "SELECT") return refused_statement(keyword);
  if (!only_trailing_noise(tail))
    return failure(SqlErrorKind::Refused, std::string(kOnlyOneSelect) + ", and this text holds more than one");
  if (!sqlite3_stmt_readonly(stmt.get())) return failure(SqlErrorKind::Refused, "the statement is not read-only");
  // The check runs statements of its own: an interrupt that ended one of them is not seen by the next.
  const auto full_text_refusal = refuse_unbounded_full_text_queries(db, sql);
  if (watchdog.expired()) return failure(SqlErrorKind::Timeout, time_limit + " while compiling");
  if (full_text_refusal) return failure(SqlErrorKind::Refused, *full_text_refusal);

  QueryResult result;
  const int n_columns = sqlite3_column_count(stmt.get());
  for (int i = 0; i < n_columns; ++i) {
    const char* name = sqlite3_column_name(stmt.get(), i);
    result.columns.push_back(valid_utf8(name ? name : ""));
  }
  int64_t bytes = 0;
  while (true) {
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      if (watchdog.expired()) return failure(SqlErrorKind::Timeout, time_limit);
      if (denial.denied)
        return failure(SqlErrorKind::Refused, "a statement may only read data, and this one " + denied_action(denial));
      if (rc == SQLITE_TOOBIG)
        return failure(SqlErrorKind::TooLarge, "result too large: a value is larger than the limit of " +
                                                   std::to_string(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1)) +
                                                   " bytes (ExecOptions::max_bytes)");
      if (rc == SQLITE_NOMEM) return failure(SqlErrorKind::TooLarge, "result too large: SQLite ran out of memory");
      if ((rc & 0xFF) == SQLITE_BUSY || (rc & 0xFF) == SQLITE_LOCKED) return locked(db_path, db);
      return failure(SqlErrorKind::Runtime, sqlite3_errmsg(db));
    }
    if (static_cast<int64_t>(result.rows.size()) >= options.max_rows) {
      result.truncated = true;
      break;
    }
    for (int i = 0; i < n_columns; ++i) bytes += value_bytes(stmt.get(), i);
    if (bytes > options.max_bytes) return failure(SqlErrorKind::TooLarge, too_large_message(options));
    std::vector<Value> row;
    row.reserve(n_columns);
    for (int i = 0; i < n_columns; ++i) row.push_back(read_column(stmt.get(), i));
    result.rows.push_back(std::move(row));
  }
  return result;
}

}  // namespace relmem
