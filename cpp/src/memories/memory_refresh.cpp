#include "relmem/memories/memory_refresh.hpp"

#include <sys/stat.h>

namespace relmem {

FileStamp stamp_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return FileStamp{};
  return FileStamp{static_cast<int64_t>(info.st_size),
                   static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec};
}

DatabaseFile database_file(const Catalog& catalog, const std::string& db) {
  const std::string path = catalog.path(db);
  return {path, stamp_file(path)};
}

std::vector<std::string> plan_refresh(const Catalog& catalog, const std::map<std::string, DatabaseFile>& held,
                                      RefreshReport& report) {
  std::vector<std::string> rebuild;
  for (const auto& name : catalog.databases()) {
    auto it = held.find(name);
    if (it == held.end()) {
      report.added.push_back(name);
      rebuild.push_back(name);
    } else if (it->second.path != catalog.path(name) || it->second.stamp != stamp_file(catalog.path(name))) {
      report.updated.push_back(name);
      rebuild.push_back(name);
    } else {
      ++report.unchanged;
    }
  }
  for (const auto& [name, _] : held)
    if (!catalog.contains(name)) report.removed.push_back(name);
  return rebuild;
}

}  // namespace relmem
