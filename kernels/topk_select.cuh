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
  // A tile's scores are all loaded before any is offered: many loads in flight per thread, not one.
  constexpr int kPerThread = kMaxGroup * kTileRows / kThreads;
  for (int64_t tile = split_begin; tile < split_end; tile += kTileRows) {
    float scores[kPerThread];
    bool valid[kPerThread];
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int i = threadIdx.x + u * kThreads;
      const int64_t column = tile + i % kTileRows;
      const int64_t row = p.first_row + column;
      valid[u] = i / kTileRows < valid_queries && column < split_end && (p.mask == nullptr || p.mask[row] != 0);
      scores[u] = valid[u] ? p.scores[(first_query + i / kTileRows) * p.ld + column] : 0.0f;
    }
    // kTileRows is a multiple of 32: the 32 lanes of a warp offer 32 columns to one query.
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int i = threadIdx.x + u * kThreads;
      if (i / kTileRows >= valid_queries) continue;  // warp-uniform
      const uint32_t row = static_cast<uint32_t>(p.first_row + tile + i % kTileRows);
      topk.offer_warp(i / kTileRows, make_topk_key(scores[u], row), valid[u]);
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

// Block (q, g) merges lists g * lists_per_block .. + lists_per_block - 1 (at most n_lists) of query q, list l at
// lists + q * query_stride + l * list_step, into out + q * out_query_stride + g * out_group_step. Keys below the
// largest k-th key of the lists are skipped; up to kMergeRankCapacity remaining keys are ranked directly, more go
// through per-warp slots (kTileRows candidates per step) of which slot 0 takes the best of the others.
struct MergeParams {
  const uint64_t* lists;
  int64_t query_stride;
  int64_t list_step;
  int n_lists;
  int lists_per_block;
  SelectLayout layout;
  uint64_t* out;
  int64_t out_query_stride;
  int64_t out_group_step;
};

__global__ void __launch_bounds__(kThreads) merge_topk_kernel(MergeParams p) {
  constexpr int kWarps = kThreads / 32;
  extern __shared__ __align__(128) unsigned char smem[];
  BlockTopK topk = BlockTopK::carve(smem, p.layout, kWarps);
  const int k = p.layout.k;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int first_list = blockIdx.y * p.lists_per_block;
  const int lists = min(p.lists_per_block, p.n_lists - first_list);
  const uint64_t* base_list = p.lists + blockIdx.x * p.query_stride + first_list * p.list_step;
  const int64_t total = static_cast<int64_t>(lists) * k;
  // Every read of this block's lists happens before its first write, so out may alias its first list.
  uint64_t* out = p.out + blockIdx.x * p.out_query_stride + blockIdx.y * p.out_group_step;

  // Each list holds k keys at least as large as its k-th: only keys at least the largest k-th key can be in the
  // top-k.
  __shared__ uint64_t warp_bound[kWarps];
  uint64_t bound = 0;
  for (int l = threadIdx.x; l < lists; l += kThreads) {
    const uint64_t kth = base_list[l * p.list_step + k - 1];
    bound = kth > bound ? kth : bound;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const uint64_t other = __shfl_xor_sync(0xFFFFFFFFu, bound, offset);
    bound = other > bound ? other : bound;
  }
  if (lane == 0) warp_bound[warp] = bound;
  __shared__ uint64_t candidates[kMergeRankCapacity];
  __shared__ int n_candidates;
  if (threadIdx.x == 0) n_candidates = 0;
  __syncthreads();
  for (int w = 0; w < kWarps; ++w) bound = warp_bound[w] > bound ? warp_bound[w] : bound;

  // The candidates, read four keys per thread at a time; when they are few, each one's rank among them is its place.
  constexpr int kUnroll = 4;
  for (int64_t first = threadIdx.x; first < total; first += kUnroll * kThreads) {
    uint64_t keys[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = first + u * kThreads;
      keys[u] = i < total ? base_list[(i / k) * p.list_step + i % k] : 0;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (keys[u] != 0 && keys[u] >= bound) {
        const int at = atomicAdd(&n_candidates, 1);
        if (at < kMergeRankCapacity) candidates[at] = keys[u];
      }
    }
  }
  __syncthreads();
  const int count = n_candidates;
  if (count <= kMergeRankCapacity) {
    for (int i = threadIdx.x; i < count; i += kThreads) {
      const uint64_t key = candidates[i];
      int rank = 0;
      for (int j = 0; j < count; ++j) rank += candidates[j] > key || (candidates[j] == key && j < i);
      if (rank < k) out[rank] = key;
    }
    for (int j = count + threadIdx.x; j < k; j += kThreads) out[j] = 0;
    return;
  }

  // Many candidates: a slot per warp, each seeded with the bound; then slot 0 takes the best of the others.
  topk.reset();
  if (threadIdx.x < kWarps && bound > 0) topk.seed(threadIdx.x, bound - 1);
  __syncthreads();
  for (int64_t base = 0; base < total; base += kWarps * kTileRows) {
    for (int part = 0; part < kTileRows; part += 32) {
      const int64_t i = base + warp * kTileRows + part + lane;
      const bool valid = i < total;
      topk.offer_warp(warp, valid ? base_list[(i / k) * p.list_step + i % k] : 0, valid);
    }
    topk.flush(kTileRows, false);
  }
  topk.flush(kTileRows, true);
  for (int slot = 1; slot < kWarps; ++slot) {
    for (int base = 0; base < k; base += kTileRows) {
      if (warp == 0) {
        for (int part = 0; part < kTileRows; part += 32) {
          const int j = base + part + lane;
          topk.offer_warp(0, j < k ? topk.best(slot)[j] : 0, j < k);
        }
      }
      topk.flush(kTileRows, false);
    }
  }
  topk.flush(kTileRows, true);
  for (int j = threadIdx.x; j < k; j += kThreads) out[j] = topk.best(0)[j];
}

}  // namespace relmem::gpu::kernels
