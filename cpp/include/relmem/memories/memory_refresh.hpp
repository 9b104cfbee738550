#pragma once
// What every memory built from a catalog shares: the progress callback of build() and refresh(), the stamp that
// tells a changed database file from an unchanged one, and the report of a refresh.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "relmem/catalog/catalog.hpp"

namespace relmem {

// Called after each database with (database, done, total).
using BuildProgress = std::function<void(const std::string& db, size_t done, size_t total)>;

// Identifies one version of a database file.
struct FileStamp {
  int64_t size = -1;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp& other) const { return size == other.size && mtime_ns == other.mtime_ns; }
  bool operator!=(const FileStamp& other) const { return !(*this == other); }
};
FileStamp stamp_file(const std::string& path);

// The file a memory read a database from.
struct DatabaseFile {
  std::string path;
  FileStamp stamp;
};
DatabaseFile database_file(const Catalog& catalog, const std::string& db);

struct RefreshReport {
  std::vector<std::string> added, updated, removed;
  int unchanged = 0;
};

// Compares what a memory holds with the catalog: databases the catalog lacks are `removed`, new ones `added`, and
// those whose file moved or changed (size or modification time) `updated`. Returns the added and updated ones in
// the catalog's order: the databases to (re)build.
std::vector<std::string> plan_refresh(const Catalog& catalog, const std::map<std::string, DatabaseFile>& held,
                                      RefreshReport& report);

}  // namespace relmem
