#pragma once
// Private to the catalog: a read-only SQLite connection used for relmem's own catalog queries.
#include <sqlite3.h>

#include <functional>
#include <string>

namespace relmem {

// "file:<percent-encoded path>?mode=ro", so that any path opens as itself and never for writing.
std::string readonly_uri(const std::string& path);

class ReadonlyConnection {
 public:
  explicit ReadonlyConnection(const std::string& path);  // throws relmem::Error
  ~ReadonlyConnection();
  ReadonlyConnection(const ReadonlyConnection&) = delete;
  ReadonlyConnection& operator=(const ReadonlyConnection&) = delete;

  // Runs a catalog query, calling `row` for each result row; throws relmem::Error with SQLite's message.
  void query(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row) const;
  sqlite3* handle() const { return db_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace relmem
