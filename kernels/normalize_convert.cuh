#pragma once
// Device code converting float rows into stored rows (normalized for cosine) and back, and moving
// stored rows. Included by normalize_convert.cu only.
#include "element_types.cuh"

namespace relmem::gpu::kernels {

constexpr int kRowsPerBlock = 8;  // one warp per row

template <typename Element>
__global__ void normalize_convert_kernel(const float* in, int64_t n, int dim, bool normalize, Element* out,
                                         int64_t out_ld) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= n) return;  // whole warps leave together
  const float* x = in + row * dim;
  float scale = 1.0f;
  if (normalize) {
    float sum_squares = 0.0f;
    for (int d = lane; d < dim; d += 32) sum_squares += x[d] * x[d];
    for (int offset = 16; offset > 0; offset /= 2) sum_squares += __shfl_xor_sync(0xFFFFFFFFu, sum_squares, offset);
    scale = sum_squares > 0.0f ? 1.0f / sqrtf(sum_squares) : 0.0f;
  }
  Element* y = out + row * out_ld;
  for (int64_t d = lane; d < out_ld; d += 32) y[d] = from_float<Element>(d < dim ? x[d] * scale : 0.0f);
}

template <typename Element>
__global__ void widen_rows_kernel(const Element* stored, int64_t n, int64_t ld, int dim, float* out) {
  const int64_t total = n * dim;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = to_float(stored[(i / dim) * ld + i % dim]);
  }
}

__global__ void gather_rows_kernel(const uint4* src, const int64_t* rows, int64_t row_vectors, uint4* dst) {
  const uint4* from = src + rows[blockIdx.x] * row_vectors;
  uint4* to = dst + static_cast<int64_t>(blockIdx.x) * row_vectors;
  for (int64_t i = threadIdx.x; i < row_vectors; i += blockDim.x) to[i] = from[i];
}

}  // namespace relmem::gpu::kernels
