#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "relmem/common.hpp"

namespace relmem {

bool worth_mapping(const std::string& path) {
  constexpr uint64_t kMinMappedBytes = uint64_t{256} << 10;
  std::error_code size_error;
  const uint64_t size = std::filesystem::file_size(path, size_error);
  return !size_error && size >= kMinMappedBytes;
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    throw Error("cannot read " + path + ": " + std::strerror(error));
  }
  size_ = static_cast<uint64_t>(info.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (mapped == MAP_FAILED) {
      const int error = errno;
      ::close(fd_);
      throw Error("cannot map " + path + ": " + std::strerror(error));
    }
    data_ = static_cast<const uint8_t*>(mapped);
  }
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  ::close(fd_);
}

void MappedFile::read_at(uint64_t offset, void* out, uint64_t size) const {
  if (offset > size_ || size > size_ - offset) throw Error("cannot read " + path_ + ": past its end");
  auto* bytes = static_cast<uint8_t*>(out);
  while (size > 0) {
    const ssize_t got = ::pread(fd_, bytes, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw Error("cannot read " + path_ + ": " + (got < 0 ? std::strerror(errno) : "unexpected end"));
    bytes += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<uint64_t>(got);
  }
}

}  // namespace relmem
