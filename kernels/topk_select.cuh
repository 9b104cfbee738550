#pragma once
// Device code of the top-k selection of score tiles written by cuBLAS (the large-batch path), and of
// the merge of per-split lists that both paths finish with. Both keep candidates in shared memory
// (BlockTopK). Included by topk_select.cu only.
#include "block_topk.cuh"
#include "kernel_launch.hpp"
#include "relmem/index/gpu/topk_keys.hpp"

namespace relmem::gpu::kernels {

struct TileParams {
  const float* scores;
  int64_t n_queries;
  int64_t ld;
  int64_t n_columns;
  int64_t first_row;
  int64_t columns_per_split;  // a multiple of kTileRows
  const uint8_t* mask;
  SelectLayout layout;
  int n_lists;
  int first_list;
  bool seed_from_list0;
  uint64_t* partial;
};

__global__ void __launch_bounds__(kThreads) tile_select_kernel(TileParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int k = p.layout.k;
  BlockTopK topk = BlockTopK::carve(smem, p.layout, p.layout.group);
  const int64_t first_query = static_cast<int64_t>(blockIdx.x) * p.layout.group;
  const int valid_queries = static_cast<int>(min(static_cast<int64_t>(p.layout.group), p.n_queries - first_query));
  const int64_t split_begin = static_cast<int64_t>(blockIdx.y) * p.columns_per_split;
  const int64_t split_end = min(p.n_columns, split_begin + p.columns_per_split);

  topk.reset();
  // List 0 holds the top-k of the tiles done before: a candidate must beat its k-th best.
  if (p.seed_from_list0 && threadIdx.x < valid_queries) {
    topk.seed(threadIdx.x, p.partial[((first_query + threadIdx.x) * p.n_lists) * k + k - 1]);
  }
  __syncthreads();
  for (int64_t tile = split_begin; tile < split_end; tile += kTileRows) {
    // kTileRows is a multiple of 32: the 32 lanes of a warp read 32 columns of one query.
    for (int i = threadIdx.x; i < valid_queries * kTileRows; i += kThreads) {
      const int q = i / kTileRows;
      const int64_t column = tile + i % kTileRows;
      const int64_t row = p.first_row + column;
      const bool valid = column < split_end && (p.mask == nullptr || p.mask[row] != 0);
      const float score = valid ? p.scores[(first_query + q) * p.ld + column] : 0.0f;
      topk.offer_warp(q, make_topk_key(score, static_cast<uint32_t>(row)), valid);
    }
    topk.flush(kTileRows, false);
  }
  topk.flush(kTileRows, true);

  const int lane = threadIdx.x % 32;
  for (int q = threadIdx.x / 32; q < valid_queries; q += kThreads / 32) {
    const uint64_t* best = topk.best(q);
    uint64_t* out = p.partial + ((first_query + q) * p.n_lists + p.first_list + blockIdx.y) * k;
    for (int j = lane; j < k; j += 32) out[j] = best[j];
  }
}

__global__ void __launch_bounds__(kThreads) merge_topk_kernel(const uint64_t* lists, int n_lists, SelectLayout layout,
                                                               uint64_t* out, int64_t out_stride) {
  extern __shared__ __align__(128) unsigned char smem[];
  BlockTopK topk = BlockTopK::carve(smem, layout, 1);
  const int k = layout.k;
  const int64_t total = static_cast<int64_t>(n_lists) * k;
  const uint64_t* candidates = lists + blockIdx.x * total;
  topk.reset();
  __syncthreads();
  for (int64_t base = 0; base < total; base += kTileRows) {
    if (threadIdx.x < kTileRows && base + threadIdx.x < total) topk.offer(0, candidates[base + threadIdx.x]);
    topk.flush(kTileRows, false);
  }
  topk.flush(kTileRows, true);
  // Every read of this query's lists happened before the flush above, so out may alias list 0.
  for (int j = threadIdx.x; j < k; j += kThreads) out[blockIdx.x * out_stride + j] = topk.best(0)[j];
}

}  // namespace relmem::gpu::kernels
