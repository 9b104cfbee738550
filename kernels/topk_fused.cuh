#pragma once
// Device code of the fused scoring + top-k for small query batches: each block streams a split of
// the stored rows once, scores 64-row tiles against its group of queries (tensor cores for
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

constexpr int kChunk = 64;       // dimensions staged in shared memory per step
constexpr int kPad = 8;          // padding of tensor-core staging rows (elements), against bank conflicts
constexpr int kStageRow = kChunk + kPad;
constexpr int kStages = 6;       // tensor-core path: chunks in flight (cp.async), the memory parallelism of a block
constexpr int kSimtGroup = 32;   // CUDA-core path: queries per block (8 per thread)

struct FusedParams {
  const void* queries;
  int64_t n_queries;
  const void* rows;
  int64_t ld;
  int64_t row_begin;
  int64_t row_end;
  int64_t rows_per_split;  // a multiple of kTileRows
  const uint8_t* mask;
  SelectLayout layout;
  int group;               // queries per block: layout.group, or fewer
  int n_splits;
  uint64_t* partial;
};

__host__ __device__ constexpr size_t align128(size_t bytes) { return (bytes + 127) / 128 * 128; }
__host__ __device__ constexpr int padded_group(int group) { return (group + 15) / 16 * 16; }

struct FusedShared {
  size_t topk = 0;
  size_t scores = 0;
  size_t stage_a = 0;
  size_t stage_b = 0;
  size_t total = 0;
};

template <typename Element, bool kTensorCores>
__host__ __device__ FusedShared fused_shared_layout(const SelectLayout& layout, int group) {
  FusedShared out;
  size_t offset = 0;
  out.topk = offset;
  offset += align128(BlockTopK::bytes(layout, group));
  out.scores = offset;
  if constexpr (kTensorCores) {
    const int queries = padded_group(group);
    offset += align128(sizeof(float) * queries * kTileRows);
    // One region (stage_b unused): kStages x [queries + kTileRows][kStageRow], each stage's queries, then its rows.
    out.stage_a = offset;
    offset += align128(sizeof(Element) * kStages * (queries + kTileRows) * kStageRow);
  } else {
    offset += align128(sizeof(float) * kSimtGroup * kTileRows);
    out.stage_a = offset;
    offset += align128(sizeof(float) * kChunk * kSimtGroup);  // [dim][query]
    out.stage_b = offset;
    offset += align128(sizeof(float) * kChunk * (kTileRows + 1));  // [dim][row]
  }
  out.total = offset;
  return out;
}

// What one block does: its group of queries and its split of the rows.
struct BlockWork {
  int64_t first_query;
  int valid_queries;
  int64_t split_begin;
  int64_t split_end;
};

__device__ BlockWork block_work(const FusedParams& p) {
  BlockWork w;
  w.first_query = static_cast<int64_t>(blockIdx.x) * p.group;
  w.valid_queries = static_cast<int>(min(static_cast<int64_t>(p.group), p.n_queries - w.first_query));
  w.split_begin = p.row_begin + static_cast<int64_t>(blockIdx.y) * p.rows_per_split;
  w.split_end = min(p.row_end, w.split_begin + p.rows_per_split);
  return w;
}

// Offers a scored tile (scores[query][kTileRows] in shared memory) to the top-k, then flushes. kTileRows is a
// multiple of 32: the lanes of a warp offer 32 rows to one query.
__device__ void offer_tile(BlockTopK& topk, const FusedParams& p, const float* scores, const BlockWork& w,
                           int64_t tile_row) {
  for (int i = threadIdx.x; i < w.valid_queries * kTileRows; i += kThreads) {
    const int q = i / kTileRows;
    const int j = i % kTileRows;
    const int64_t row = tile_row + j;
    const bool valid = row < w.split_end && (p.mask == nullptr || p.mask[row] != 0);
    topk.offer_warp(q, make_topk_key(scores[q * kTileRows + j], static_cast<uint32_t>(row)), valid);
  }
  topk.flush(kTileRows, false);
}

// After the final flush: each query's list of this split.
__device__ void write_lists(const BlockTopK& topk, const FusedParams& p, const BlockWork& w) {
  const int lane = threadIdx.x % 32;
  const int k = p.layout.k;
  for (int q = threadIdx.x / 32; q < w.valid_queries; q += kThreads / 32) {
    const uint64_t* best = topk.best(q);
    uint64_t* out = p.partial + ((w.first_query + q) * p.n_splits + blockIdx.y) * k;
    for (int j = lane; j < k; j += 32) out[j] = best[j];
  }
}

// ---- Tensor-core path: a kStages-deep cp.async pipeline over (tile, chunk) steps ---------------------------------

__device__ __forceinline__ void cp_async16(void* shared, const void* global, int source_bytes) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(source_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// Starts copying one chunk (kChunk dims from dim0) of the block's queries and of a tile's rows into `stage`,
// zero-filling what lies past the queries, the split or the leading dimension.
template <typename Element>
__device__ void issue_stage(const FusedParams& p, Element* stage, int queries, int64_t first_query,
                            int valid_queries, int64_t tile_row, int64_t split_end, int64_t dim0) {
  constexpr int kVector = 16 / sizeof(Element);
  constexpr int kVectorsPerRow = kChunk / kVector;
  const Element* query_base = static_cast<const Element*>(p.queries);
  const Element* row_base = static_cast<const Element*>(p.rows);
  const int total = (queries + kTileRows) * kVectorsPerRow;
  for (int v = threadIdx.x; v < total; v += kThreads) {
    const int r = v / kVectorsPerRow;
    const int column = (v % kVectorsPerRow) * kVector;
    const int64_t d = dim0 + column;
    const Element* source = row_base;
    bool valid = d < p.ld;
    if (r < queries) {
      valid = valid && r < valid_queries;
      if (valid) source = query_base + (first_query + r) * p.ld + d;
    } else {
      const int64_t row = tile_row + (r - queries);
      valid = valid && row < split_end;
      if (valid) source = row_base + row * p.ld + d;
    }
    cp_async16(stage + r * kStageRow + column, source, valid ? 16 : 0);
  }
}

template <typename Element>
__device__ void fused_topk_tensor_cores(const FusedParams& p, unsigned char* smem) {
  using namespace nvcuda;
  const FusedShared layout = fused_shared_layout<Element, true>(p.layout, p.group);
  BlockTopK topk = BlockTopK::carve(smem + layout.topk, p.layout, p.group);
  float* scores = reinterpret_cast<float*>(smem + layout.scores);
  Element* stages = reinterpret_cast<Element*>(smem + layout.stage_a);
  const int queries = padded_group(p.group);
  const int stage_elements = (queries + kTileRows) * kStageRow;

  const BlockWork w = block_work(p);
  const int n_chunks = static_cast<int>((p.ld + kChunk - 1) / kChunk);
  const int64_t n_tiles = w.split_end > w.split_begin ? (w.split_end - w.split_begin + kTileRows - 1) / kTileRows : 0;
  const int64_t steps = n_tiles * n_chunks;

  auto issue = [&](int64_t step) {
    if (step < steps) {
      issue_stage<Element>(p, stages + (step % kStages) * stage_elements, queries, w.first_query, w.valid_queries,
                           w.split_begin + (step / n_chunks) * kTileRows, w.split_end, (step % n_chunks) * kChunk);
    }
    cp_async_commit();  // empty groups too, so that every thread counts the same groups
  };

  // Output fragments (16 queries x 16 rows) of the tile, two per warp at most: fragment f covers queries
  // 16 * (f / 4) .. and rows 16 * (f % 4) ..
  constexpr int kRowFragments = kTileRows / 16;
  static_assert(kMaxGroup / 16 * kRowFragments <= 2 * (kThreads / 32), "two fragments per warp cover the largest group");
  const int warp = threadIdx.x / 32;
  const int n_fragments = queries / 16 * kRowFragments;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
  wmma::fill_fragment(acc[0], 0.0f);
  wmma::fill_fragment(acc[1], 0.0f);

  topk.reset();
  for (int s = 0; s < kStages - 1; ++s) issue(s);
  for (int64_t step = 0; step < steps; ++step) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    issue(step + kStages - 1);  // into the stage read in the previous step, which every thread is done with
    const Element* stage = stages + (step % kStages) * stage_elements;
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      const int fragment = warp + f * (kThreads / 32);
      if (fragment < n_fragments) {
        const Element* a_base = stage + (fragment / kRowFragments) * 16 * kStageRow;
        const Element* b_base = stage + (queries + (fragment % kRowFragments) * 16) * kStageRow;
#pragma unroll
        for (int k16 = 0; k16 < kChunk / 16; ++k16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, Element, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, Element, wmma::col_major> b;
          wmma::load_matrix_sync(a, a_base + k16 * 16, kStageRow);
          wmma::load_matrix_sync(b, b_base + k16 * 16, kStageRow);
          wmma::mma_sync(acc[f], a, b, acc[f]);
        }
      }
    }
    if (step % n_chunks != n_chunks - 1) continue;
    // The tile is scored: offer it to the top-k.
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      const int fragment = warp + f * (kThreads / 32);
      if (fragment < n_fragments) {
        wmma::store_matrix_sync(scores + (fragment / kRowFragments) * 16 * kTileRows + (fragment % kRowFragments) * 16,
                                acc[f], kTileRows, wmma::mem_row_major);
        wmma::fill_fragment(acc[f], 0.0f);
      }
    }
    __syncthreads();
    offer_tile(topk, p, scores, w, w.split_begin + (step / n_chunks) * kTileRows);
  }
  cp_async_wait<0>();
  topk.flush(kTileRows, true);
  write_lists(topk, p, w);
}

// ---- CUDA-core path (fp32 storage, or fused_simt): register-staged chunks, 8 queries x 1 row per thread ----------

// One chunk (kChunk dims) of the block's queries and of a tile's rows, held in registers as 16-byte
// vectors so that the next chunk's loads are in flight while the current one is multiplied.
template <typename Element>
struct StagedChunk {
  static constexpr int kVector = 16 / sizeof(Element);
  static constexpr int kVectorsPerRow = kChunk / kVector;
  static constexpr int kLoadsA = kSimtGroup * kVectorsPerRow / kThreads;
  static constexpr int kLoadsB = kTileRows * kVectorsPerRow / kThreads;
  static_assert(kSimtGroup * kVectorsPerRow % kThreads == 0 && kTileRows * kVectorsPerRow % kThreads == 0,
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

  // As floats, transposed to [dim][query] and [dim][row].
  __device__ void store_transposed(float* stage_a, float* stage_b) const {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int v = threadIdx.x + i * kThreads;
      const int q = v / kVectorsPerRow;
      const int d = (v % kVectorsPerRow) * kVector;
      Element values[kVector];
      memcpy(values, &a[i], sizeof values);
#pragma unroll
      for (int e = 0; e < kVector; ++e) stage_a[(d + e) * kSimtGroup + q] = to_float(values[e]);
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
};

// Scores of the tile (kSimtGroup x kTileRows, row-major) into shared `scores`: thread t owns row t % 64 and
// queries 8 * (t / 64) .. + 7. Ends with __syncthreads().
template <typename Element>
__device__ void score_tile_simt(const FusedParams& p, unsigned char* smem, const FusedShared& layout,
                                int64_t first_query, int valid_queries, int64_t tile_row, int64_t split_end) {
  static_assert(kThreads / kTileRows * 8 == kSimtGroup, "8 queries per thread cover the group");
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
        const float4 a0 = *reinterpret_cast<const float4*>(stage_a + d * kSimtGroup + query0);
        const float4 a1 = *reinterpret_cast<const float4*>(stage_a + d * kSimtGroup + query0 + 4);
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

template <typename Element>
__device__ void fused_topk_simt(const FusedParams& p, unsigned char* smem) {
  const FusedShared layout = fused_shared_layout<Element, false>(p.layout, p.group);
  BlockTopK topk = BlockTopK::carve(smem + layout.topk, p.layout, p.group);
  const float* scores = reinterpret_cast<const float*>(smem + layout.scores);
  const BlockWork w = block_work(p);
  topk.reset();
  __syncthreads();
  for (int64_t tile_row = w.split_begin; tile_row < w.split_end; tile_row += kTileRows) {
    score_tile_simt<Element>(p, smem, layout, w.first_query, w.valid_queries, tile_row, w.split_end);
    offer_tile(topk, p, scores, w, tile_row);
  }
  topk.flush(kTileRows, true);
  write_lists(topk, p, w);
}

template <typename Element, bool kTensorCores>
__global__ void __launch_bounds__(kThreads) fused_topk_kernel(FusedParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  if constexpr (kTensorCores) {
    fused_topk_tensor_cores<Element>(p, smem);
  } else {
    fused_topk_simt<Element>(p, smem);
  }
}

}  // namespace relmem::gpu::kernels
