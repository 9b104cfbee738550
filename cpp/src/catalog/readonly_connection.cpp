#include "readonly_connection.hpp"

#include <cstdio>
#include <filesystem>

#include "relmem/common.hpp"

namespace relmem {

std::string readonly_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?mode=ro";
}

ReadonlyConnection::ReadonlyConnection(const std::string& path) : path_(path) {
  if (!std::filesystem::is_regular_file(path)) throw Error("database file not found: " + path);
  const int rc = sqlite3_open_v2(readonly_uri(path).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error("cannot open " + path + ": " + message);
  }
  sqlite3_busy_timeout(db_, 2000);
}

ReadonlyConnection::~ReadonlyConnection() { sqlite3_close_v2(db_); }

void ReadonlyConnection::query(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) const {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    throw Error(path_ + ": " + message);
  }
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) throw Error(path_ + ": " + sqlite3_errmsg(db_));
}

}  // namespace relmem
