// On-disk format, little-endian:
//   "RMVI" | u32 version | u32 dim | u32 metric | u64 count | i64 next_id | i64 ids[count] | f32 vectors[count*dim]
//   | u64 checksum of every byte before it.
#include <cstring>
#include <fstream>
#include <mutex>

#include "relmem/index/device_placement.hpp"
#include "relmem/index/gpu/gpu_vector_index.hpp"
#include "relmem/index/vector_index.hpp"

namespace relmem {
namespace {

constexpr char kMagic[4] = {'R', 'M', 'V', 'I'};
constexpr uint32_t kVersion = 1;

// FNV-1a over 64-bit words (tail bytes zero-padded): fast enough for hundreds of MB, catches truncation and flips.
class Checksum {
 public:
  void update(const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) {
      pending_ |= static_cast<uint64_t>(bytes[i]) << (8 * filled_);
      if (++filled_ == 8) flush();
    }
  }
  uint64_t digest() {
    if (filled_) flush();
    return hash_;
  }

 private:
  void flush() {
    hash_ = (hash_ ^ pending_) * 0x100000001b3ULL;
    pending_ = 0;
    filled_ = 0;
  }
  uint64_t hash_ = 0xcbf29ce484222325ULL;
  uint64_t pending_ = 0;
  int filled_ = 0;
};

class Writer {
 public:
  explicit Writer(const std::string& path) : out_(path, std::ios::binary | std::ios::trunc), path_(path) {
    if (!out_) throw Error("cannot write index file " + path);
  }
  void write(const void* data, size_t size) {
    checksum_.update(data, size);
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  void finish() {
    const uint64_t digest = checksum_.digest();
    out_.write(reinterpret_cast<const char*>(&digest), sizeof digest);
    out_.close();
    if (!out_) throw Error("failed writing index file " + path_);
  }

 private:
  std::ofstream out_;
  std::string path_;
  Checksum checksum_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : in_(path, std::ios::binary), path_(path) {
    if (!in_) throw Error("cannot open index file " + path);
  }
  void read(void* data, size_t size) {
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
    if (static_cast<size_t>(in_.gcount()) != size) throw Error("index file " + path_ + " is truncated");
    checksum_.update(data, size);
  }
  template <typename T>
  T read_value() {
    T value;
    read(&value, sizeof value);
    return value;
  }
  void verify() {
    const uint64_t expected = checksum_.digest();
    uint64_t stored = 0;
    in_.read(reinterpret_cast<char*>(&stored), sizeof stored);
    if (in_.gcount() != sizeof stored) throw Error("index file " + path_ + " is truncated");
    if (stored != expected) throw Error("index file " + path_ + " is corrupt (checksum mismatch)");
    if (in_.peek() != std::char_traits<char>::eof()) throw Error("index file " + path_ + " has trailing bytes");
  }

 private:
  std::ifstream in_;
  std::string path_;
  Checksum checksum_;
};

}  // namespace

void VectorIndex::save(const std::string& path) const {
  if (gpu_) return gpu_->save(path);
  std::shared_lock lock(mutex_);
  Writer writer(path);
  writer.write(kMagic, sizeof kMagic);
  const uint32_t header[3] = {kVersion, static_cast<uint32_t>(dim_), static_cast<uint32_t>(metric_)};
  writer.write(header, sizeof header);
  const uint64_t count = ids_.size();
  writer.write(&count, sizeof count);
  writer.write(&next_id_, sizeof next_id_);
  writer.write(ids_.data(), count * sizeof(int64_t));
  writer.write(vectors_.data(), count * static_cast<size_t>(dim_) * sizeof(float));
  writer.finish();
}

VectorIndex VectorIndex::load(const std::string& path, const std::string& device, const std::string& dtype) {
  const DevicePlacement placement = resolve_device_placement(device, dtype);
  if (placement.cuda_device >= 0)
    return VectorIndex(GpuVectorIndex::load(path, placement.precision, placement.cuda_device), placement.cuda_device);
  Reader reader(path);
  char magic[4];
  reader.read(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) throw Error(path + " is not a relmem vector index file");
  const auto version = reader.read_value<uint32_t>();
  if (version != kVersion)
    throw Error(path + " has index format version " + std::to_string(version) + ", this relmem reads version " +
                std::to_string(kVersion));
  const auto dim = reader.read_value<uint32_t>();
  const auto metric = reader.read_value<uint32_t>();
  const auto count = reader.read_value<uint64_t>();
  const auto next_id = reader.read_value<int64_t>();
  if (dim == 0 || dim > (1u << 20) || metric > 1 || count > (uint64_t{1} << 40))
    throw Error("index file " + path + " has an invalid header");
  std::vector<int64_t> ids(count);
  reader.read(ids.data(), count * sizeof(int64_t));
  RowMatrix vectors(static_cast<Eigen::Index>(count), static_cast<Eigen::Index>(dim));
  reader.read(vectors.data(), count * dim * sizeof(float));
  reader.verify();

  VectorIndex index(static_cast<int>(dim), static_cast<Metric>(metric));
  index.vectors_ = std::move(vectors);
  index.ids_ = std::move(ids);
  for (size_t row = 0; row < index.ids_.size(); ++row) index.row_of_id_[index.ids_[row]] = static_cast<int64_t>(row);
  if (index.row_of_id_.size() != index.ids_.size()) throw Error("index file " + path + " has duplicate ids");
  index.next_id_ = next_id;
  return index;
}

}  // namespace relmem
