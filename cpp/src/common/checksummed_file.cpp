#include "checksummed_file.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "new_file.hpp"

namespace relmem {
namespace {

constexpr size_t kMagicSize = 4;
constexpr uint64_t kHeaderSize = kMagicSize + sizeof(uint32_t);

// FNV-1a 64 over `size` bytes taken as words of kWordSize bytes in this machine's (little-endian) order, the last
// one zero-padded.
template <size_t kWordSize>
uint64_t fnv1a(uint64_t hash, const char* data, size_t size) {
  for (size_t at = 0; at < size; at += kWordSize) {
    uint64_t word = 0;
    std::memcpy(&word, data + at, std::min(kWordSize, size - at));
    hash = (hash ^ word) * 0x100000001b3ULL;
  }
  return hash;
}

// The checksum of the stream's next `size` bytes. Stops early when the stream fails: callers check it.
uint64_t checksum_of(std::istream& in, uint64_t size, size_t word_size) {
  uint64_t hash = kChecksumStart;
  std::vector<char> chunk(size_t{1} << 20);  // whole words: only the file's last word can be partial
  for (uint64_t left = size; left > 0;) {
    const size_t piece = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    if (!in.read(chunk.data(), static_cast<std::streamsize>(piece))) break;
    hash = checksum_of_bytes(chunk.data(), piece, word_size, hash);
    left -= piece;
  }
  return hash;
}

}  // namespace

uint64_t checksum_of_bytes(const void* data, size_t size, size_t word_size, uint64_t hash) {
  const auto* bytes = static_cast<const char*>(data);
  return word_size == 8 ? fnv1a<8>(hash, bytes, size) : fnv1a<1>(hash, bytes, size);
}

ChecksummedFileWriter::ChecksummedFileWriter(const ChecksummedFormat& format, const std::string& path)
    : format_(format),
      path_(path),
      temporary_path_(make_temporary_sibling(path, format.kind)),
      file_(temporary_path_, std::ios::binary | std::ios::in | std::ios::out | std::ios::trunc) {
  if (!file_) throw Error("cannot write " + std::string(format.kind) + " file " + path);
  write(format.magic, kMagicSize);
  write_values(format.version);
}

ChecksummedFileWriter::~ChecksummedFileWriter() {
  if (committed_) return;
  file_.close();
  std::error_code ignored;
  std::filesystem::remove(temporary_path_, ignored);
}

void ChecksummedFileWriter::commit() {
  const auto size = static_cast<uint64_t>(file_.tellp());
  const uint64_t checksum = checksum_of(file_.seekg(0), size, format_.checksum_word_size);
  file_.seekp(0, std::ios::end).write(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  file_.close();
  if (!file_) throw Error("failed writing " + std::string(format_.kind) + " file " + path_);
  move_into_place(temporary_path_, path_, format_.kind);
  committed_ = true;
}

ChecksummedFileReader::ChecksummedFileReader(const ChecksummedFormat& format, const std::string& path)
    : format_(format), path_(path), in_(path, std::ios::binary | std::ios::ate) {
  if (!in_) throw Error("cannot open " + std::string(format.kind) + " file " + path);
  const uint64_t size = static_cast<uint64_t>(std::max<std::streamoff>(in_.tellg(), 0));
  char magic[kMagicSize] = {};
  in_.seekg(0).read(magic, kMagicSize);
  if (size < kMagicSize || std::memcmp(magic, format.magic, kMagicSize) != 0)
    throw Error(path + " is not a relmem " + format.kind + " file (bad magic)");
  if (size < kHeaderSize) throw error("is truncated");
  in_.read(reinterpret_cast<char*>(&version_), sizeof version_);
  if (version_ < format.oldest_version || version_ > format.version) {
    const std::string readable =
        format.oldest_version == format.version
            ? "version " + std::to_string(format.version)
            : "versions " + std::to_string(format.oldest_version) + " to " + std::to_string(format.version);
    throw error("has format version " + std::to_string(version_) + "; this relmem reads " + readable);
  }
  if (size < kHeaderSize + sizeof(uint64_t)) throw error("is truncated");
  checksum_offset_ = size - sizeof(uint64_t);
  const uint64_t checksum = checksum_of(in_.seekg(0), checksum_offset_, format.checksum_word_size);
  uint64_t stored = 0;
  if (!in_.read(reinterpret_cast<char*>(&stored), sizeof stored)) throw error("is truncated");  // shrank meanwhile
  if (stored != checksum) throw error("is corrupt (checksum mismatch)");
  in_.seekg(static_cast<std::streamoff>(kHeaderSize));
  offset_ = kHeaderSize;
}

void ChecksummedFileReader::read(void* data, size_t size) {
  // The stream buffer directly: istream::read's per-call checks cost more than a field's copy.
  const auto count = static_cast<std::streamsize>(size);
  if (size > checksum_offset_ - offset_ || in_.rdbuf()->sgetn(static_cast<char*>(data), count) != count)
    throw error("is truncated");
  offset_ += size;
}

void ChecksummedFileReader::expect_room_for(uint64_t count, uint64_t item_size) const {
  if (item_size && count > (checksum_offset_ - offset_) / item_size) throw error("is truncated");
}

void ChecksummedFileReader::finish() const {
  if (offset_ != checksum_offset_) throw error("has trailing bytes");
}

Error ChecksummedFileReader::error(const std::string& problem) const {
  return Error(std::string(format_.kind) + " file " + path_ + " " + problem);
}

void pad_to_section(ChecksummedFileWriter& file, uint64_t& offset) {
  static const char zeros[kSectionAlignment] = {};
  const uint64_t gap = section_start(offset) - offset;
  file.write(zeros, gap);
  offset += gap;
}

void write_section(ChecksummedFileWriter& file, uint64_t& offset, const void* data, uint64_t size) {
  file.write(data, size);
  offset += size;
  pad_to_section(file, offset);
}

void skip_to_section(ChecksummedFileReader& file, uint64_t& offset) {
  char gap[kSectionAlignment];
  const uint64_t size = section_start(offset) - offset;
  file.read(gap, size);
  offset += size;
}

}  // namespace relmem
