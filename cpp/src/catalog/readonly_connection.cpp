#include "readonly_connection.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace relmem {
namespace {

// Bytes 18 and 19 of a SQLite header (the write and read format versions) are 2 in WAL mode.
bool is_wal_database(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[20] = {};
  if (!in.read(header, sizeof header)) return false;
  return header[18] == 2 && header[19] == 2;
}

}  // namespace

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
  std::error_code ignored;
  const bool immutable = is_wal_database(path) && !std::filesystem::exists(path + "-wal", ignored);
  return uri + (immutable ? "?mode=ro&immutable=1" : "?mode=ro");
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
  const int prepare_rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
  if (prepare_rc != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    if ((prepare_rc & 0xFF) == SQLITE_BUSY || (prepare_rc & 0xFF) == SQLITE_LOCKED)
      throw DatabaseLocked(path_ + " is locked by another connection (" + message + ")");
    throw Error(path_ + ": " + message);
  }
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
  sqlite3_finalize(stmt);
  if (rc == SQLITE_DONE) return;
  const int primary = rc & 0xFF;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    throw DatabaseLocked(path_ + " is locked by another connection (" + sqlite3_errmsg(db_) + ")");
  throw Error(path_ + ": " + sqlite3_errmsg(db_));
}

}  // namespace relmem
