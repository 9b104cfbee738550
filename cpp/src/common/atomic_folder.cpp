#include "atomic_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "relmem/common.hpp"

namespace fs = std::filesystem;

namespace relmem {
namespace {

void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + path.string() + " to flush it: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0 && error != EINVAL) throw Error("cannot flush " + path.string() + ": " + std::strerror(error));
}

void sync_tree(const fs::path& folder) {
  for (const auto& entry : fs::recursive_directory_iterator(folder)) sync_path(entry.path());
  sync_path(folder);
}

bool replaceable(const fs::path& folder) {
  std::error_code error;
  return fs::is_empty(folder, error) || fs::exists(folder / "manifest.json", error);
}

}  // namespace

AtomicFolder::AtomicFolder(const std::string& folder) : folder_(fs::path(folder).lexically_normal().string()) {
  while (folder_.size() > 1 && folder_.back() == '/') folder_.pop_back();
  const fs::path target(folder_);
  std::error_code error;
  if (fs::exists(target, error)) {
    if (!fs::is_directory(target, error)) throw Error("cannot save into " + folder + ": it exists and is not a folder");
    if (!replaceable(target))
      throw Error("cannot save into " + folder + ": the folder holds other files and no relmem manifest.json; "
                  "choose an empty or new folder");
  }
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, error);
  if (error) throw Error("cannot create the folder " + parent.string() + ": " + error.message());
  std::string pattern = (parent / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data())) throw Error("cannot create a temporary folder beside " + folder + ": " + std::strerror(errno));
  temporary_ = buffer.data();
}

AtomicFolder::~AtomicFolder() {
  if (!done_) discard();
}

void AtomicFolder::discard() {
  std::error_code ignored;
  fs::remove_all(temporary_, ignored);
  done_ = true;
}

void AtomicFolder::commit() {
  sync_tree(temporary_);
  std::error_code error;
  if (!fs::exists(folder_, error)) {
    if (::rename(temporary_.c_str(), folder_.c_str()) != 0)
      throw Error("cannot move the new folder onto " + folder_ + ": " + std::strerror(errno));
  } else if (::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, folder_.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(temporary_, error);  // the old folder, now under the temporary name
  } else {
    // File systems without RENAME_EXCHANGE: the old folder steps aside first, so the new one never lands in it.
    const std::string old = temporary_ + ".old";
    if (::rename(folder_.c_str(), old.c_str()) != 0)
      throw Error("cannot move the old folder " + folder_ + " aside: " + std::strerror(errno));
    if (::rename(temporary_.c_str(), folder_.c_str()) != 0) {
      const int moved = errno;
      ::rename(old.c_str(), folder_.c_str());
      throw Error("cannot move the new folder onto " + folder_ + ": " + std::strerror(moved));
    }
    fs::remove_all(old, error);
  }
  fs::path parent = fs::path(folder_).parent_path();
  sync_path(parent.empty() ? fs::path(".") : parent);
  done_ = true;
}

std::string content_checksum(const std::string& bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace relmem
