#pragma once
// Private to the catalog: a read-only SQLite connection used for relmem's own catalog queries.
#include <sqlite3.h>

#include <functional>
#include <string>

#include "relmem/common.hpp"

namespace relmem {

// "file:<percent-encoded path>?mode=ro", so that any path opens as itself and never for writing; with
// "&immutable=1" for a WAL database that has no -wal file beside it, so that reading it creates no -wal or -shm
// file (with a -wal file, someone writes or wrote it: SQLite must read the log, and the folder has its files
// already).
std::string readonly_uri(const std::string& path);

// Thrown when another connection holds a lock that keeps the database from being read.
class DatabaseLocked : public Error {
 public:
  using Error::Error;
};

class ReadonlyConnection {
 public:
  explicit ReadonlyConnection(const std::string& path);  // throws relmem::Error
  ~ReadonlyConnection();
  ReadonlyConnection(const ReadonlyConnection&) = delete;
  ReadonlyConnection& operator=(const ReadonlyConnection&) = delete;

  // Runs a catalog query, calling `row` for each result row; throws relmem::Error with SQLite's message
  // (DatabaseLocked when the database is locked).
  void query(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) const;
  sqlite3* handle() const { return db_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace relmem
