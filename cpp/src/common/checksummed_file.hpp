#pragma once
// Binary files that start with a four-character magic and a u32 format version and end with a u64 FNV-1a checksum
// of every byte before it, all in this machine's (little-endian) byte order. The writer streams into "<path>.tmp"
// and renames it onto the path once complete, so a failed save leaves the previous file in place. The reader checks
// magic, version and checksum before handing out any field, so damage is reported as such, never read as data.
// Messages name the file and the problem: "<kind> file <path> is truncated".
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

struct ChecksummedFormat {
  const char* kind;           // names the file in messages
  const char* magic;          // four characters
  uint32_t oldest_version;    // the oldest version the reader accepts
  uint32_t version;           // the version the writer writes, the newest the reader accepts
  size_t checksum_word_size;  // 1: FNV-1a over bytes; 8: over little-endian 64-bit words (faster), tail zero-padded
};

// The checksum these files carry, of `size` bytes in memory (word_size as in ChecksummedFormat), continuing `hash`
// (the FNV-1a offset basis when starting): for formats that also checksum a part of themselves.
constexpr uint64_t kChecksumStart = 0xcbf29ce484222325ULL;
uint64_t checksum_of_bytes(const void* data, size_t size, size_t word_size, uint64_t hash = kChecksumStart);

class ChecksummedFileWriter {
 public:
  // Starts the temporary file with the magic and the format's version.
  ChecksummedFileWriter(const ChecksummedFormat& format, const std::string& path);
  ~ChecksummedFileWriter();  // removes the temporary file unless commit() succeeded

  void write(const void* data, size_t size) {
    // The stream buffer directly: ostream::write's per-call checks cost more than a field's copy.
    const auto count = static_cast<std::streamsize>(size);
    if (file_.rdbuf()->sputn(static_cast<const char*>(data), count) != count) file_.setstate(std::ios::badbit);
  }
  template <typename... T>
  void write_values(const T&... values) {
    (write(&values, sizeof values), ...);
  }
  // Appends the checksum of what was written and moves the finished file onto the path.
  void commit();

 private:
  const ChecksummedFormat& format_;
  std::string path_;
  std::string temporary_path_;
  std::fstream file_;
  bool committed_ = false;
};

class ChecksummedFileReader {
 public:
  // Opens the file and checks its magic, its version (one the format accepts) and its checksum.
  ChecksummedFileReader(const ChecksummedFormat& format, const std::string& path);

  uint32_t version() const { return version_; }
  void read(void* data, size_t size);  // throws "... is truncated" when fewer bytes precede the checksum
  template <typename T>
  T read_value() {
    T value;
    read(&value, sizeof value);
    return value;
  }
  template <typename T>
  std::vector<T> read_array(uint64_t count) {
    expect_room_for(count, sizeof(T));
    std::vector<T> values(static_cast<size_t>(count));
    read(values.data(), values.size() * sizeof(T));
    return values;
  }
  // Throws "... is truncated" unless `count` items of `item_size` bytes precede the checksum: call it before
  // allocating for a count read from the file.
  void expect_room_for(uint64_t count, uint64_t item_size) const;
  void finish() const;  // throws "... has trailing bytes" unless every byte before the checksum was read
  Error error(const std::string& problem) const;  // "<kind> file <path> <problem>"

 private:
  const ChecksummedFormat& format_;
  std::string path_;
  std::ifstream in_;
  uint32_t version_ = 0;
  uint64_t checksum_offset_ = 0;
  uint64_t offset_ = 0;
};

// Formats laid out for mapping start each section at a multiple of kSectionAlignment bytes from the file's start (the
// gaps zero), so that a mapped file's arrays are used in place. `offset` follows the bytes written or read so far.
constexpr uint64_t kSectionAlignment = 64;
inline uint64_t section_start(uint64_t offset) {
  return (offset + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
}
void pad_to_section(ChecksummedFileWriter& file, uint64_t& offset);    // writes the zero gap
void write_section(ChecksummedFileWriter& file, uint64_t& offset, const void* data, uint64_t size);  // then pads
void skip_to_section(ChecksummedFileReader& file, uint64_t& offset);  // reads the gap

}  // namespace relmem
