// On-disk format, little-endian, version 2 (sections start at multiples of 64 bytes, so a mapped file's rows are
// used in place; the gaps are zero):
//   "RMVI" | u32 version | u32 dim | u32 metric | u32 dtype (0 fp32, 1 fp16, 2 int8) | u32 rerank | u64 count
//   | i64 next_id | u64 header checksum (FNV-1a over 64-bit words of the fields before it, then the ids, then the
//   scales) | i64 ids[count] | f32 scales[count] (int8 only) | rows[count * dim] in the dtype
//   | f32 exact rows[count * dim] (compact dtype with rerank > 0 only) | u64 FNV-1a checksum of every byte before it.
// Version 1 (still read): "RMVI" | u32 1 | u32 dim | u32 metric | u64 count | i64 next_id | i64 ids[count]
//   | f32 vectors[count * dim] | u64 checksum.
#include <cstring>
#include <mutex>

#include "../common/checksummed_file.hpp"
#include "../common/mapped_file.hpp"
#include "relmem/index/device_placement.hpp"
#include "relmem/index/gpu/gpu_vector_index.hpp"
#include "relmem/index/vector_index.hpp"

namespace relmem {
namespace {

constexpr ChecksummedFormat kVectorIndexFile{"vector index", "RMVI", 1, 2, /*checksum_word_size=*/8};
constexpr uint64_t kPreambleSize = 8;  // magic and version

struct Header {
  uint32_t dim = 0;
  uint32_t metric = 0;
  uint32_t dtype = 0;
  uint32_t rerank = 0;
  uint64_t count = 0;
  int64_t next_id = 0;
  uint64_t header_checksum = 0;
};
static_assert(sizeof(Header) == 40, "the header is written as it is laid out in memory");
constexpr size_t kChecksummedHeaderBytes = offsetof(Header, header_checksum);

RowType row_type_of(const Header& header) { return static_cast<RowType>(header.dtype); }
bool has_exact(const Header& header) { return header.rerank > 0 && row_type_of(header) != RowType::FP32; }

// Where each section starts (bytes from the start of the file) and where the checksum starts.
struct Layout {
  uint64_t ids = 0, scales = 0, rows = 0, exact = 0, end = 0;
};

Layout layout_of(const Header& header) {
  Layout layout;
  const uint64_t n = header.count;
  layout.ids = section_start(kPreambleSize + sizeof(Header));
  layout.scales = section_start(layout.ids + n * sizeof(int64_t));
  layout.rows = section_start(layout.scales + (row_type_of(header) == RowType::INT8 ? n * sizeof(float) : 0));
  layout.exact = section_start(layout.rows + n * header.dim * bytes_per_value(row_type_of(header)));
  layout.end = section_start(layout.exact + (has_exact(header) ? n * header.dim * sizeof(float) : 0));
  return layout;
}

bool valid(const Header& header, uint32_t version) {
  return header.dim > 0 && header.dim <= (1u << 20) && header.metric <= 1 && header.count <= (uint64_t{1} << 40) &&
         (version == 1 || (header.dtype <= 2 && header.rerank <= (1u << 24)));
}

uint64_t header_checksum(const Header& header, const int64_t* ids, const float* scales) {
  uint64_t hash = checksum_of_bytes(&header, kChecksummedHeaderBytes, 8);
  hash = checksum_of_bytes(ids, header.count * sizeof(int64_t), 8, hash);
  if (row_type_of(header) == RowType::INT8) hash = checksum_of_bytes(scales, header.count * sizeof(float), 8, hash);
  return hash;
}

}  // namespace

void VectorIndex::save(const std::string& path) const {
  if (gpu_) return gpu_->save(path);
  std::shared_lock lock(mutex_);
  Header header;
  header.dim = static_cast<uint32_t>(dim_);
  header.metric = static_cast<uint32_t>(metric_);
  header.dtype = static_cast<uint32_t>(row_type_);
  header.rerank = static_cast<uint32_t>(rerank_);
  header.count = static_cast<uint64_t>(ids_.size());
  header.next_id = next_id_;
  const RowsView rows = rows_.view();
  header.header_checksum = header_checksum(header, ids_.ids().data(), rows.scales);

  ChecksummedFileWriter file(kVectorIndexFile, path);
  uint64_t offset = kPreambleSize;
  auto section = [&](const void* data, uint64_t size) { write_section(file, offset, data, size); };
  section(&header, sizeof header);
  section(ids_.ids().data(), header.count * sizeof(int64_t));
  if (row_type_ == RowType::INT8) section(rows.scales, header.count * sizeof(float));
  section(rows.codes, rows_.code_bytes());
  if (exact_) section(exact_->view().codes, exact_->code_bytes());
  file.commit();
}

void VectorIndex::verify(const std::string& path) { ChecksummedFileReader file(kVectorIndexFile, path); }

VectorIndex VectorIndex::load(const std::string& path, const std::string& device, const std::string& dtype,
                              bool mmap) {
  const DevicePlacement placement = resolve_device_placement(device, dtype.empty() ? "fp32" : dtype);
  if (placement.cuda_device >= 0) {
    if (mmap) throw Error("mmap loads a VectorIndex on the CPU, not on " + device);
    return VectorIndex(GpuVectorIndex::load(path, placement.precision, placement.cuda_device), placement.cuda_device);
  }
  std::unique_ptr<VectorIndex> loaded;
  if (mmap && worth_mapping(path)) {
    auto file = std::make_shared<MappedFile>(path);
    const uint8_t* data = file->data();
    auto error = [&](const std::string& problem) { return Error("vector index file " + path + " " + problem); };
    if (file->size() < 4 || std::memcmp(data, "RMVI", 4) != 0)
      throw Error(path + " is not a relmem vector index file (bad magic)");
    if (file->size() < kPreambleSize + sizeof(Header)) throw error("is truncated");
    uint32_t version = 0;
    std::memcpy(&version, data + 4, sizeof version);
    if (version == 2) {
      Header header;
      std::memcpy(&header, data + kPreambleSize, sizeof header);
      if (!valid(header, version)) throw error("has an invalid header");
      const Layout layout = layout_of(header);
      if (file->size() != layout.end + sizeof(uint64_t)) throw error("is truncated or has trailing bytes");
      const auto* ids = reinterpret_cast<const int64_t*>(data + layout.ids);
      const auto* scales = reinterpret_cast<const float*>(data + layout.scales);
      if (header_checksum(header, ids, scales) != header.header_checksum) throw error("is corrupt (checksum mismatch)");
      loaded = std::make_unique<VectorIndex>(static_cast<int>(header.dim), static_cast<Metric>(header.metric), "cpu",
                                             row_type_name(row_type_of(header)), static_cast<int>(header.rerank));
      if (!loaded->ids_.assign(std::vector<int64_t>(ids, ids + header.count))) throw error("has duplicate ids");
      loaded->next_id_ = header.next_id;
      loaded->rows_.attach(file, data + layout.rows, scales, static_cast<int64_t>(header.count));
      loaded->row_file_ = file;
      loaded->row_file_offset_ = layout.rows;
      if (loaded->exact_) {
        loaded->exact_->attach(file, data + layout.exact, nullptr, static_cast<int64_t>(header.count));
      }
    }
  }
  if (!loaded) {
    ChecksummedFileReader file(kVectorIndexFile, path);
    Header header;
    uint64_t offset = kPreambleSize;
    if (file.version() == 1) {
      header.dim = file.read_value<uint32_t>();
      header.metric = file.read_value<uint32_t>();
      header.count = file.read_value<uint64_t>();
      header.next_id = file.read_value<int64_t>();
    } else {
      header = file.read_value<Header>();
      offset += sizeof header;
      skip_to_section(file, offset);
    }
    if (!valid(header, file.version())) throw file.error("has an invalid header");
    const uint64_t n = header.count;
    const RowType type = row_type_of(header);
    auto read_section = [&](uint64_t count, uint64_t item_size) {
      file.expect_room_for(count, item_size);
      AlignedBytes bytes(static_cast<size_t>(count * item_size));
      file.read(bytes.data(), bytes.size());
      offset += bytes.size();
      if (file.version() >= 2) skip_to_section(file, offset);
      return bytes;
    };
    std::vector<int64_t> ids = file.read_array<int64_t>(n);
    offset += n * sizeof(int64_t);
    if (file.version() >= 2) skip_to_section(file, offset);
    std::vector<float> scales;
    if (type == RowType::INT8) {
      scales = file.read_array<float>(n);
      offset += n * sizeof(float);
      skip_to_section(file, offset);
    }
    AlignedBytes rows = read_section(n, header.dim * bytes_per_value(type));
    AlignedBytes exact;
    if (has_exact(header)) exact = read_section(n, header.dim * sizeof(float));
    file.finish();
    if (file.version() >= 2 && header_checksum(header, ids.data(), scales.data()) != header.header_checksum)
      throw file.error("is corrupt (header checksum mismatch)");

    loaded = std::make_unique<VectorIndex>(static_cast<int>(header.dim), static_cast<Metric>(header.metric), "cpu",
                                           row_type_name(type), static_cast<int>(header.rerank));
    if (!loaded->ids_.assign(std::move(ids))) throw file.error("has duplicate ids");
    loaded->next_id_ = header.next_id;
    loaded->rows_.assign(std::move(rows), std::move(scales), static_cast<int64_t>(n));
    if (loaded->exact_) loaded->exact_->assign(std::move(exact), {}, static_cast<int64_t>(n));
  }
  if (dtype.empty() || placement.row_type == loaded->row_type_) return std::move(*loaded);

  // Another dtype than the file's: widen every row to fp32 and store it again.
  VectorIndex converted(loaded->dim_, Metric::InnerProduct, "cpu", dtype, loaded->rerank_);
  const std::vector<int64_t>& ids = loaded->ids_.ids();
  std::vector<float> row(static_cast<size_t>(loaded->dim_));
  const RowsView source = (loaded->exact_ ? *loaded->exact_ : loaded->rows_).view();
  for (int64_t r = 0; r < loaded->ids_.size(); ++r) {
    source.decode(r, row.data());
    converted.add(row.data(), 1, &ids[static_cast<size_t>(r)]);
  }
  converted.metric_ = loaded->metric_;
  converted.next_id_ = loaded->next_id_;
  return converted;
}

}  // namespace relmem
