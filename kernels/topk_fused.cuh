#pragma once
// Device code of the fused scoring + top-k for small query batches: each block streams a split of
// the stored rows once, scores 64-row tiles against up to 32 queries (WMMA tensor cores for
// fp16/bf16, or CUDA cores), keeps each query's top-k in shared memory (BlockTopK) and writes one
// sorted list per query and split; merge_topk then combines the splits. The score matrix never
// reaches global memory. Included by topk_fused.cu only.
#include <mma.h>

#include <cstring>

#include "block_topk.cuh"
#include "element_types.cuh"
#include "kernel_launch.hpp"
#include "relmem/index/gpu/topk_keys.hpp"

namespace relmem::gpu::kernels {

constexpr int kChunk = 64;  // dimensions staged in shared memory per step
constexpr int kPad = 8;     // padding of WMMA staging rows (elements), against bank conflicts

struct FusedParams {
  const void* queries;
  int64_t n_queries;
  const void* rows;
  int64_t ld;
  int64_t row_begin;
  int64_t row_end;
  int64_t rows_per_split;  // a multiple of kTileRows
  const uint8_t* mask;
  int k;
  int list_length;
  int group;
  int n_splits;
  uint64_t* partial;
};

__host__ __device__ constexpr size_t align128(size_t bytes) { return (bytes + 127) / 128 * 128; }

struct FusedShared {
  size_t topk = 0;
  size_t row_ok = 0;
  size_t scores = 0;
  size_t stage_a = 0;
  size_t stage_b = 0;
  size_t total = 0;
};

template <typename Element, bool kTensorCores>
__host__ __device__ FusedShared fused_shared_layout(int group, int list_length) {
  FusedShared layout;
  size_t offset = 0;
  layout.topk = offset;
  offset += align128(BlockTopK::bytes(group, list_length));
  layout.row_ok = offset;
  offset += align128(kTileRows);
  layout.scores = offset;
  offset += align128(sizeof(float) * kMaxGroup * kTileRows);
  layout.stage_a = offset;
  if constexpr (kTensorCores) {
    offset += align128(sizeof(Element) * kMaxGroup * (kChunk + kPad));  // [query][dim]
    layout.stage_b = offset;
    offset += align128(sizeof(Element) * kTileRows * (kChunk + kPad));  // [row][dim]
  } else {
    offset += align128(sizeof(float) * kChunk * kMaxGroup);  // [dim][query]
    layout.stage_b = offset;
    offset += align128(sizeof(float) * kChunk * (kTileRows + 1));  // [dim][row]
  }
  layout.total = offset;
  return layout;
}

// One chunk (kChunk dims) of the block's queries and of a tile's rows, held in registers as 16-byte
// vectors so that the next chunk's loads are in flight while the current one is multiplied.
template <typename Element>
struct StagedChunk {
  static constexpr int kVector = 16 / sizeof(Element);
  static constexpr int kVectorsPerRow = kChunk / kVector;
  static constexpr int kLoadsA = kMaxGroup * kVectorsPerRow / kThreads;
  static constexpr int kLoadsB = kTileRows * kVectorsPerRow / kThreads;
  static_assert(kMaxGroup * kVectorsPerRow % kThreads == 0 && kTileRows * kVectorsPerRow % kThreads == 0,
                "staging loads must divide evenly among the threads");
  uint4 a[kLoadsA];
  uint4 b[kLoadsB];

  __device__ void load(const FusedParams& p, int64_t first_query, int valid_queries, int64_t tile_row,
                       int64_t split_end, int64_t dim0) {
    const Element* queries = static_cast<const Element*>(p.queries);
    const Element* rows = static_cast<const Element*>(p.rows);
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int q = v / kVectorsPerRow;
      const int64_t d = dim0 + (v % kVectorsPerRow) * kVector;
      a[i] = (q < valid_queries && d < p.ld)
                 ? *reinterpret_cast<const uint4*>(queries + (first_query + q) * p.ld + d)
                 : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int64_t row = tile_row + v / kVectorsPerRow;
      const int64_t d = dim0 + (v % kVectorsPerRow) * kVector;
      b[i] = (row < split_end && d < p.ld) ? *reinterpret_cast<const uint4*>(rows + row * p.ld + d)
                                           : make_uint4(0, 0, 0, 0);
    }
  }

  // CUDA-core layout: floats, transposed to [dim][query] and [dim][row].
  __device__ void store_transposed(float* stage_a, float* stage_b) const {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int q = v / kVectorsPerRow;
      const int d = (v % kVectorsPerRow) * kVector;
      Element values[kVector];
      memcpy(values, &a[i], sizeof values);
#pragma unroll
      for (int e = 0; e < kVector; ++e) stage_a[(d + e) * kMaxGroup + q] = to_float(values[e]);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int r = v / kVectorsPerRow;
      const int d = (v % kVectorsPerRow) * kVector;
      Element values[kVector];
      memcpy(values, &b[i], sizeof values);
#pragma unroll
      for (int e = 0; e < kVector; ++e) stage_b[(d + e) * (kTileRows + 1) + r] = to_float(values[e]);
    }
  }

  // Tensor-core layout: elements as they are, [query][dim] and [row][dim] with kPad padding.
  __device__ void store_rows(Element* stage_a, Element* stage_b) const {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int offset = (v / kVectorsPerRow) * (kChunk + kPad) + (v % kVectorsPerRow) * kVector;
      *reinterpret_cast<uint4*>(stage_a + offset) = a[i];
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int offset = (v / kVectorsPerRow) * (kChunk + kPad) + (v % kVectorsPerRow) * kVector;
      *reinterpret_cast<uint4*>(stage_b + offset) = b[i];
    }
  }
};

// Scores of the tile (kMaxGroup x kTileRows, row-major) into shared `scores`, with CUDA cores: thread
// t owns row t % 64 and queries 8 * (t / 64) .. + 7. Ends with __syncthreads().
template <typename Element>
__device__ void score_tile_simt(const FusedParams& p, unsigned char* smem, const FusedShared& layout,
                                int64_t first_query, int valid_queries, int64_t tile_row, int64_t split_end) {
  float* stage_a = reinterpret_cast<float*>(smem + layout.stage_a);
  float* stage_b = reinterpret_cast<float*>(smem + layout.stage_b);
  float* scores = reinterpret_cast<float*>(smem + layout.scores);
  const int row = threadIdx.x % kTileRows;
  const int query0 = (threadIdx.x / kTileRows) * 8;
  const bool active = query0 < valid_queries;  // the rest of the group is padding
  const int n_chunks = static_cast<int>((p.ld + kChunk - 1) / kChunk);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  StagedChunk<Element> staged;
  staged.load(p, first_query, valid_queries, tile_row, split_end, 0);
  for (int chunk = 0; chunk < n_chunks; ++chunk) {
    __syncthreads();
    staged.store_transposed(stage_a, stage_b);
    __syncthreads();
    if (chunk + 1 < n_chunks) {
      staged.load(p, first_query, valid_queries, tile_row, split_end, static_cast<int64_t>(chunk + 1) * kChunk);
    }
    if (active) {
#pragma unroll 8
      for (int d = 0; d < kChunk; ++d) {
        const float b = stage_b[d * (kTileRows + 1) + row];
        const float4 a0 = *reinterpret_cast<const float4*>(stage_a + d * kMaxGroup + query0);
        const float4 a1 = *reinterpret_cast<const float4*>(stage_a + d * kMaxGroup + query0 + 4);
        acc[0] += a0.x * b;
        acc[1] += a0.y * b;
        acc[2] += a0.z * b;
        acc[3] += a0.w * b;
        acc[4] += a1.x * b;
        acc[5] += a1.y * b;
        acc[6] += a1.z * b;
        acc[7] += a1.w * b;
      }
    }
  }
  if (active) {
#pragma unroll
    for (int i = 0; i < 8; ++i) scores[(query0 + i) * kTileRows + row] = acc[i];
  }
  __syncthreads();
}

// The same with WMMA 16x16x16 fragments (fp32 accumulation): warp w computes queries
// 16 * (w / 4) .. + 15 against rows 16 * (w % 4) .. + 15. Ends with __syncthreads().
template <typename Element>
__device__ void score_tile_wmma(const FusedParams& p, unsigned char* smem, const FusedShared& layout,
                                int64_t first_query, int valid_queries, int64_t tile_row, int64_t split_end) {
  using namespace nvcuda;
  static_assert(kThreads / 32 == (kMaxGroup / 16) * (kTileRows / 16), "one 16x16 output fragment per warp");
  Element* stage_a = reinterpret_cast<Element*>(smem + layout.stage_a);
  Element* stage_b = reinterpret_cast<Element*>(smem + layout.stage_b);
  float* scores = reinterpret_cast<float*>(smem + layout.scores);
  const int warp = threadIdx.x / 32;
  const int query_fragment = warp / (kTileRows / 16);
  const int row_fragment = warp % (kTileRows / 16);
  const bool active = query_fragment * 16 < valid_queries;  // warp-uniform; the rest is padding
  const int n_chunks = static_cast<int>((p.ld + kChunk - 1) / kChunk);
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  StagedChunk<Element> staged;
  staged.load(p, first_query, valid_queries, tile_row, split_end, 0);
  for (int chunk = 0; chunk < n_chunks; ++chunk) {
    __syncthreads();
    staged.store_rows(stage_a, stage_b);
    __syncthreads();
    if (chunk + 1 < n_chunks) {
      staged.load(p, first_query, valid_queries, tile_row, split_end, static_cast<int64_t>(chunk + 1) * kChunk);
    }
    if (active) {
#pragma unroll
      for (int step = 0; step < kChunk / 16; ++step) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, Element, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, Element, wmma::col_major> b;
        wmma::load_matrix_sync(a, stage_a + query_fragment * 16 * (kChunk + kPad) + step * 16, kChunk + kPad);
        wmma::load_matrix_sync(b, stage_b + row_fragment * 16 * (kChunk + kPad) + step * 16, kChunk + kPad);
        wmma::mma_sync(acc, a, b, acc);
      }
    }
  }
  if (active) {
    wmma::store_matrix_sync(scores + query_fragment * 16 * kTileRows + row_fragment * 16, acc, kTileRows,
                            wmma::mem_row_major);
  }
  __syncthreads();
}

template <typename Element, bool kTensorCores>
__global__ void __launch_bounds__(kThreads, 2) fused_topk_kernel(FusedParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  const FusedShared layout = fused_shared_layout<Element, kTensorCores>(p.group, p.list_length);
  BlockTopK topk = BlockTopK::carve(smem + layout.topk, p.group, p.list_length, p.k);
  uint8_t* row_ok = smem + layout.row_ok;
  const float* scores = reinterpret_cast<const float*>(smem + layout.scores);

  const int64_t first_query = static_cast<int64_t>(blockIdx.x) * p.group;
  const int valid_queries = static_cast<int>(min(static_cast<int64_t>(p.group), p.n_queries - first_query));
  const int64_t split_begin = p.row_begin + static_cast<int64_t>(blockIdx.y) * p.rows_per_split;
  const int64_t split_end = min(p.row_end, split_begin + p.rows_per_split);

  topk.reset();
  __syncthreads();
  for (int64_t tile_row = split_begin; tile_row < split_end; tile_row += kTileRows) {
    if (threadIdx.x < kTileRows) {
      const int64_t row = tile_row + threadIdx.x;
      row_ok[threadIdx.x] = row < split_end && (p.mask == nullptr || p.mask[row] != 0);
    }
    if constexpr (kTensorCores) {
      score_tile_wmma<Element>(p, smem, layout, first_query, valid_queries, tile_row, split_end);
    } else {
      score_tile_simt<Element>(p, smem, layout, first_query, valid_queries, tile_row, split_end);
    }
    for (int i = threadIdx.x; i < valid_queries * kTileRows; i += kThreads) {
      const int q = i / kTileRows;
      const int j = i % kTileRows;
      if (row_ok[j]) topk.offer(q, make_topk_key(scores[q * kTileRows + j], static_cast<uint32_t>(tile_row + j)));
    }
    topk.flush(kTileRows, false);
  }
  topk.flush(kTileRows, true);

  const int lane = threadIdx.x % 32;
  for (int q = threadIdx.x / 32; q < valid_queries; q += kThreads / 32) {
    const uint64_t* best = topk.best(q);
    uint64_t* out = p.partial + ((first_query + q) * p.n_splits + blockIdx.y) * p.k;
    for (int j = lane; j < p.k; j += 32) out[j] = best[j];
  }
}

}  // namespace relmem::gpu::kernels
