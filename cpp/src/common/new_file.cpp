#include "new_file.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "relmem/common.hpp"

namespace fs = std::filesystem;

namespace relmem {

std::string make_temporary_sibling(const std::string& path, const std::string& kind) {
  const fs::path target(path);
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string pattern = (parent / ("." + target.filename().string() + ".XXXXXX.tmp")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemps(name.data(), 4);
  if (fd < 0) throw Error("cannot write " + kind + " file " + path + ": " + std::strerror(errno));
  ::close(fd);
  return name.data();
}

void move_into_place(const std::string& temporary, const std::string& path, const std::string& kind) {
  const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  const bool flushed = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!flushed || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw Error("failed writing " + kind + " file " + path + ": " + reason);
  }
}

void write_file_atomically(const std::string& path, const std::string& bytes, const std::string& kind) {
  const std::string temporary = make_temporary_sibling(path, kind);
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  const bool written = file && std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const bool closed = file && std::fclose(file) == 0;
  if (!written || !closed) {
    std::remove(temporary.c_str());
    throw Error("failed writing " + kind + " file " + path);
  }
  move_into_place(temporary, path, kind);
}

}  // namespace relmem
