#include "own_database.hpp"

#include <filesystem>

#include "relmem/common.hpp"

namespace relmem {
namespace {

int64_t query_integer(sqlite3* db, const char* sql) {
  sqlite3_stmt* statement = nullptr;
  int64_t value = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW)
    value = sqlite3_column_int64(statement, 0);
  const int rc = sqlite3_finalize(statement);
  if (rc != SQLITE_OK) throw Error(sqlite3_errmsg(db));
  return value;
}

void execute(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    throw Error(text);
  }
}

}  // namespace

sqlite3* open_own_database(const std::string& path, int64_t application_id, const std::string& what) {
  if (path.empty()) throw Error(what + " path is empty");
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ignored;
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);  // a failure surfaces at open
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw Error(what + ": cannot open " + path + ": " + message);
  }
  try {
    sqlite3_busy_timeout(db, 10000);  // several processes may share the file
    const int64_t claimed = query_integer(db, "PRAGMA application_id");
    if (claimed != application_id) {
      if (claimed != 0 || query_integer(db, "SELECT COUNT(*) FROM sqlite_master") != 0)
        throw Error(what + ": " + path + " is a database of another application, not a relmem " + what +
                    "; choose a new file");
      execute(db, "PRAGMA application_id = " + std::to_string(application_id));
    }
    execute(db, "PRAGMA journal_mode = WAL");
  } catch (const Error& e) {
    sqlite3_close(db);
    const std::string message = e.what();
    if (message.rfind(what + ":", 0) == 0) throw;
    throw Error(what + ": cannot open " + path + ": " + message);
  }
  return db;
}

}  // namespace relmem
