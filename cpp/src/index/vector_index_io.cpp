// On-disk format, little-endian:
//   "RMVI" | u32 version | u32 dim | u32 metric | u64 count | i64 next_id | i64 ids[count] | f32 vectors[count*dim]
//   | u64 FNV-1a checksum, over 64-bit words, of every byte before it.
#include <mutex>

#include "../common/checksummed_file.hpp"
#include "relmem/index/device_placement.hpp"
#include "relmem/index/gpu/gpu_vector_index.hpp"
#include "relmem/index/vector_index.hpp"

namespace relmem {
namespace {

constexpr ChecksummedFormat kVectorIndexFile{"vector index", "RMVI", 1, 1, /*checksum_word_size=*/8};

}  // namespace

void VectorIndex::save(const std::string& path) const {
  if (gpu_) return gpu_->save(path);
  std::shared_lock lock(mutex_);
  ChecksummedFileWriter file(kVectorIndexFile, path);
  file.write_values(static_cast<uint32_t>(dim_), static_cast<uint32_t>(metric_), static_cast<uint64_t>(ids_.size()),
                    next_id_);
  file.write(ids_.data(), ids_.size() * sizeof(int64_t));
  file.write(vectors_.data(), ids_.size() * static_cast<size_t>(dim_) * sizeof(float));
  file.commit();
}

VectorIndex VectorIndex::load(const std::string& path, const std::string& device, const std::string& dtype) {
  const DevicePlacement placement = resolve_device_placement(device, dtype);
  if (placement.cuda_device >= 0)
    return VectorIndex(GpuVectorIndex::load(path, placement.precision, placement.cuda_device), placement.cuda_device);
  ChecksummedFileReader file(kVectorIndexFile, path);
  const auto dim = file.read_value<uint32_t>();
  const auto metric = file.read_value<uint32_t>();
  const auto count = file.read_value<uint64_t>();
  const auto next_id = file.read_value<int64_t>();
  if (dim == 0 || dim > (1u << 20) || metric > 1 || count > (uint64_t{1} << 40))
    throw file.error("has an invalid header");
  std::vector<int64_t> ids = file.read_array<int64_t>(count);
  file.expect_room_for(count, dim * sizeof(float));
  RowMatrix vectors(static_cast<Eigen::Index>(count), static_cast<Eigen::Index>(dim));
  file.read(vectors.data(), count * dim * sizeof(float));
  file.finish();

  VectorIndex index(static_cast<int>(dim), static_cast<Metric>(metric));
  index.vectors_ = std::move(vectors);
  index.ids_ = std::move(ids);
  for (size_t row = 0; row < index.ids_.size(); ++row) index.row_of_id_[index.ids_[row]] = static_cast<int64_t>(row);
  if (index.row_of_id_.size() != index.ids_.size()) throw file.error("has duplicate ids");
  index.next_id_ = next_id;
  return index;
}

}  // namespace relmem
