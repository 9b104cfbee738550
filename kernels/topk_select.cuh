#pragma once
// Device code of the top-k selection of score tiles written by cuBLAS (the large-batch path), and of
// the merge of per-split lists that both paths finish with. Both keep candidates in shared memory
// (BlockTopK). Included by topk_select.cu only.
#include "block_topk.cuh"
#include "kernel_launch.hpp"
#include "relmem/index/gpu/topk_keys.hpp"

namespace relmem::gpu::kernels {

constexpr int kMergeTile = 128;  // candidates offered between two merges in merge_topk_kernel

struct TileParams {
  const float* scores;
  int64_t n_queries;
  int64_t ld;
  int64_t n_columns;
  int64_t first_row;
  int64_t columns_per_split;  // a multiple of kTileRows
  const uint8_t* mask;
  int k;
  int list_length;
  int group;
  int n_lists;
  int first_list;
  uint64_t* partial;
};

__global__ void __launch_bounds__(kThreads) tile_select_kernel(TileParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  BlockTopK topk = BlockTopK::carve(smem, p.group, p.list_length, p.k);
  const int64_t first_query = static_cast<int64_t>(blockIdx.x) * p.group;
  const int valid_queries = static_cast<int>(min(static_cast<int64_t>(p.group), p.n_queries - first_query));
  const int64_t split_begin = static_cast<int64_t>(blockIdx.y) * p.columns_per_split;
  const int64_t split_end = min(p.n_columns, split_begin + p.columns_per_split);

  topk.reset();
  __syncthreads();
  for (int64_t tile = split_begin; tile < split_end; tile += kTileRows) {
    for (int i = threadIdx.x; i < valid_queries * kTileRows; i += kThreads) {
      const int q = i / kTileRows;
      const int64_t column = tile + i % kTileRows;
      if (column >= split_end) continue;
      const int64_t row = p.first_row + column;
      if (p.mask != nullptr && p.mask[row] == 0) continue;
      topk.offer(q, make_topk_key(p.scores[(first_query + q) * p.ld + column], static_cast<uint32_t>(row)));
    }
    topk.flush(kTileRows, false);
  }
  topk.flush(kTileRows, true);

  const int lane = threadIdx.x % 32;
  for (int q = threadIdx.x / 32; q < valid_queries; q += kThreads / 32) {
    const uint64_t* best = topk.best(q);
    uint64_t* out = p.partial + ((first_query + q) * p.n_lists + p.first_list + blockIdx.y) * p.k;
    for (int j = lane; j < p.k; j += 32) out[j] = best[j];
  }
}

__global__ void __launch_bounds__(kThreads) merge_topk_kernel(const uint64_t* lists, int n_lists, int k,
                                                               int list_length, uint64_t* out,
                                                               int64_t out_stride) {
  extern __shared__ __align__(128) unsigned char smem[];
  BlockTopK topk = BlockTopK::carve(smem, 1, list_length, k);
  const int64_t total = static_cast<int64_t>(n_lists) * k;
  const uint64_t* candidates = lists + blockIdx.x * total;

  topk.reset();
  __syncthreads();
  for (int64_t base = 0; base < total; base += kMergeTile) {
    if (threadIdx.x < kMergeTile && base + threadIdx.x < total) topk.offer(0, candidates[base + threadIdx.x]);
    topk.flush(kMergeTile, false);
  }
  topk.flush(kMergeTile, true);
  // Every read of this query's lists happened before the flush above, so out may alias list 0.
  for (int j = threadIdx.x; j < k; j += kThreads) out[blockIdx.x * out_stride + j] = topk.best(0)[j];
}

}  // namespace relmem::gpu::kernels
