// Baseline top-k by sorting whole score rows (cub::DeviceSegmentedRadixSort), to compare the
// selection kernels against; also the path for k beyond kMaxSelectK.
#include <cub/device/device_segmented_radix_sort.cuh>

#include "kernel_launch.hpp"
#include "relmem/index/gpu/topk_keys.hpp"

namespace relmem::gpu::kernels {
namespace {

__global__ void fill_columns(int* values, int64_t total, int64_t segment_length) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    values[i] = static_cast<int>(i % segment_length);
  }
}

__global__ void fill_offsets(int* offsets, int64_t n_segments, int64_t segment_length) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i <= n_segments;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    offsets[i] = static_cast<int>(i * segment_length);
  }
}

__global__ void take_first_k(const float* sorted, const int* sorted_columns, int64_t n_segments,
                             int64_t segment_length, int64_t first_row, int k, uint64_t* out) {
  const int64_t total = n_segments * k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t segment = i / k;
    const int64_t rank = i % k;
    const int64_t at = segment * segment_length + rank;
    out[i] = rank < segment_length
                 ? make_topk_key(sorted[at], static_cast<uint32_t>(first_row + sorted_columns[at]))
                 : kPaddingKey;
  }
}

unsigned grid_for(int64_t items) {
  const int64_t blocks = (items + 255) / 256;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

}  // namespace

cudaError_t sort_select(const float* scores, int64_t n_segments, int64_t segment_length, int64_t first_row,
                        int k, float* sorted, int* values, int* sorted_values, int* offsets, void* temp,
                        size_t& temp_bytes, uint64_t* out, cudaStream_t stream) {
  const int64_t items = n_segments * segment_length;
  if (items >= 0x7FFFFFFFll || k < 1 || first_row + segment_length > 0xFFFFFFFFll) return cudaErrorInvalidValue;
  if (temp == nullptr) {
    return cub::DeviceSegmentedRadixSort::SortPairsDescending(
        nullptr, temp_bytes, scores, sorted, values, sorted_values, static_cast<int>(items),
        static_cast<int>(n_segments), offsets, offsets + 1, 0, 32, stream);
  }
  if (items == 0) return cudaSuccess;
  fill_columns<<<grid_for(items), 256, 0, stream>>>(values, items, segment_length);
  fill_offsets<<<grid_for(n_segments + 1), 256, 0, stream>>>(offsets, n_segments, segment_length);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) return status;
  status = cub::DeviceSegmentedRadixSort::SortPairsDescending(
      temp, temp_bytes, scores, sorted, values, sorted_values, static_cast<int>(items), static_cast<int>(n_segments),
      offsets, offsets + 1, 0, 32, stream);
  if (status != cudaSuccess) return status;
  take_first_k<<<grid_for(n_segments * k), 256, 0, stream>>>(sorted, sorted_values, n_segments, segment_length,
                                                             first_row, k, out);
  return cudaGetLastError();
}

}  // namespace relmem::gpu::kernels
