#pragma once
// A whole file mapped read-only into memory: its pages are read from disk (or the page cache) when first touched
// and can be dropped by the kernel under memory pressure, so a large file opens at once and costs resident memory
// only for what is read.
#include <cstdint>
#include <string>

namespace relmem {

// Whether a load that may map `path` should: false for files under 256 KiB (and ones whose size cannot be read),
// which are read instead, since a mapping costs a page-table entry range and a file descriptor's worth of kernel
// bookkeeping, and a process may hold only so many (vm.max_map_count, 65530 by default).
bool worth_mapping(const std::string& path);

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // relmem::Error when the file cannot be opened or mapped
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // Copies `size` bytes at `offset` with pread, without mapping them: for parts read at random, of which a mapping
  // would keep whole large page-cache folios (hundreds of KiB per row read) counted as this process's resident
  // memory. relmem::Error on a read error or past the end.
  void read_at(uint64_t offset, void* out, uint64_t size) const;

 private:
  std::string path_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace relmem
