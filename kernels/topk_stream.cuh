#pragma once
// Device code of the streaming top-k: fused_topk's path for fp16/bf16 rows and k <= kStreamMaxK. Each warp
// streams 32-row tiles of its block's split straight from global memory into mma.sync operand registers (16-byte
// loads, kStreamDepth steps of 32 dimensions in flight), scores them against the block's 8 * NT queries held in
// shared memory, and keeps its own top-k per query in shared memory; a block-wide threshold per query lets every
// warp skip what another warp's list already beats. At the end the warps' lists are combined into one per query
// and split, as fused_topk writes them. Included by topk_stream.cu only.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "block_topk.cuh"
#include "kernel_launch.hpp"
#include "relmem/index/gpu/topk_keys.hpp"

namespace relmem::gpu::kernels {

constexpr int kStreamWarps = 8;
constexpr int kStreamThreads = kStreamWarps * 32;
constexpr int kStreamTileRows = 32;  // rows a warp scores between two top-k updates: two m16 fragments
constexpr int kStreamDepth = 2;      // 32-dimension steps in flight per warp, 2 KiB each (H200: 4 and 6 were slower)
constexpr int kStreamList = 16;      // best keys kept per query and warp (>= kStreamMaxK)
constexpr int kStreamSlot = 64;      // a list and a buffer for at least one tile's candidates, a power of two
static_assert(kStreamList >= kStreamMaxK && kStreamSlot >= kStreamList + kStreamTileRows, "slot too short");

struct StreamParams {
  const void* queries;
  int64_t n_queries;
  const void* rows;
  int64_t ld;
  int64_t row_begin;
  int64_t row_end;
  int64_t rows_per_split;
  const uint8_t* mask;
  int k;
  int n_splits;
  uint64_t* partial;
};

// Staged queries are padded to 64 elements plus 32: consecutive query rows then start 64 bytes apart modulo 128,
// so the 16-byte operand loads of a quarter warp (two queries, four chunks each) hit distinct banks.
__host__ __device__ constexpr int64_t stream_query_stride(int64_t ld) { return (ld + 63) / 64 * 64 + 32; }

struct StreamShared {
  size_t queries = 0;     // [8 * NT][stream_query_stride] elements
  size_t thresholds = 0;  // [8 * NT] block-wide k-th best keys
  size_t keys = 0;        // [warps][8 * NT][kStreamSlot]
  size_t counts = 0;      // [warps][8 * NT] candidates in each buffer
  size_t scratch = 0;     // [warps][kStreamWarps * kStreamList] for combining the warps' lists
  size_t total = 0;
};

__host__ __device__ inline StreamShared stream_shared_layout(int64_t ld, int queries, int element_bytes) {
  auto align = [](size_t bytes) { return (bytes + 127) / 128 * 128; };
  StreamShared s;
  size_t offset = 0;
  s.queries = offset;
  offset += align(static_cast<size_t>(queries) * stream_query_stride(ld) * element_bytes);
  s.thresholds = offset;
  offset += align(sizeof(uint64_t) * queries);
  s.keys = offset;
  offset += align(sizeof(uint64_t) * kStreamWarps * queries * kStreamSlot);
  s.counts = offset;
  offset += align(sizeof(int) * kStreamWarps * queries);
  s.scratch = offset;
  offset += align(sizeof(uint64_t) * kStreamWarps * kStreamWarps * kStreamList);
  s.total = offset;
  return s;
}

template <typename Element>
__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                          uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                  uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                                         uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Rows are read once: skip L1, and let L2 fetch the whole 256-byte stretch the next steps read.
__device__ __forceinline__ uint4 load_streaming(const void* address) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address));
  return v;
}

// One step's operands of a warp: for both 16-row fragments, rows g and g + 8 (g = lane / 4), 8 dimensions each
// (the lane's quarter, lane % 4, of 32). In the mma the lane's 8 dimensions fill its k slots {2t, 2t+1, 2t+8,
// 2t+9} of two k16 products; the queries' operands take the same dimensions, so the sum is the dot product.
struct StreamStep {
  uint4 v[2][2];
};

template <typename Element, int NT>
struct StreamWarp {
  const StreamParams& p;
  const Element* queries;  // staged, stream_query_stride apart
  int64_t query_stride;
  int64_t split_begin;
  int64_t split_end;
  int valid_queries;
  int lane;
  const Element* lane_rows;  // the lane's first row of the split, at its 8 dimensions of the first step
  int64_t lane_rows_left;    // rows of the split from that one on
  float acc[2][NT][4];

  __device__ void start(int64_t begin, int64_t end) {
    split_begin = begin;
    split_end = end;
    lane_rows = static_cast<const Element*>(p.rows) + (begin + lane / 4) * p.ld + (lane % 4) * 8;
    lane_rows_left = end - begin - lane / 4;
  }

  __device__ void load(StreamStep& step, int64_t tile, int kb) const {
    const int64_t first = tile * kStreamTileRows;
    const Element* base = lane_rows + first * p.ld + kb * 32;
    const bool in_row = kb * 32 + (lane % 4) * 8 < p.ld;
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // rows 8i: fragment i / 2, half i % 2
      step.v[i / 2][i % 2] = in_row && first + 8 * i < lane_rows_left ? load_streaming(base + i * 8 * p.ld)
                                                                     : make_uint4(0, 0, 0, 0);
    }
  }

  __device__ void multiply(const StreamStep& step, int kb) {
    const Element* b_base = queries + (lane / 4) * query_stride + kb * 32 + (lane % 4) * 8;
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      const uint4 b = *reinterpret_cast<const uint4*>(b_base + n * 8 * query_stride);
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        const uint4& lo = step.v[m][0];
        const uint4& hi = step.v[m][1];
        mma_16816<Element>(acc[m][n], lo.x, hi.x, lo.y, hi.y, b.x, b.y);
        mma_16816<Element>(acc[m][n], lo.z, hi.z, lo.w, hi.w, b.z, b.w);
      }
    }
  }

  // Offers the tile's scores (accumulator element e of fragment (m, n): row 16m + 8(e / 2) + g, query
  // 8n + 2t + e % 2) to the warp's buffers and clears the accumulators.
  __device__ void offer(int64_t tile, uint64_t* keys, int* counts, const volatile uint64_t* thresholds) {
    const int64_t base = split_begin + tile * kStreamTileRows + lane / 4;
#pragma unroll
    for (int n = 0; n < NT; ++n) {
#pragma unroll
      for (int e2 = 0; e2 < 2; ++e2) {
        const int q = 8 * n + 2 * (lane % 4) + e2;
        if (q >= valid_queries) continue;
        const uint64_t threshold = thresholds[q];
#pragma unroll
        for (int m = 0; m < 2; ++m) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int64_t row = base + 16 * m + 8 * h;
            if (row >= split_end || (p.mask != nullptr && p.mask[row] == 0)) continue;
            const uint64_t key = make_topk_key(acc[m][n][2 * h + e2], static_cast<uint32_t>(row));
            if (key > threshold) {
              const int position = atomicAdd(&counts[q], 1);
              keys[q * kStreamSlot + kStreamList + position] = key;
            }
          }
        }
      }
    }
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.0f;
  }
};

// One warp: sorts query q's slot (its list, then `count` candidates), keeps the best kStreamList and raises the
// block-wide threshold to the slot's k-th key.
__device__ inline void stream_merge(uint64_t* keys, int* counts, uint64_t* thresholds, int q, int k, int lane) {
  uint64_t* a = keys + q * kStreamSlot;
  for (int i = kStreamList + counts[q] + lane; i < kStreamSlot; i += 32) a[i] = 0;
  __syncwarp();
  warp_sort_descending(a, kStreamSlot, lane);
  if (lane == 0) {
    atomicMax(reinterpret_cast<unsigned long long*>(thresholds + q), static_cast<unsigned long long>(a[k - 1]));
    counts[q] = 0;
  }
  __syncwarp();
}

// Merges every slot of the warp that holds more than `limit` candidates.
template <int kQueries>
__device__ void stream_merge_full(uint64_t* keys, int* counts, uint64_t* thresholds, int valid_queries, int k,
                                  int limit, int lane) {
  static_assert(kQueries <= 32, "a lane per query");
  unsigned full = __ballot_sync(0xFFFFFFFFu, lane < valid_queries && counts[lane] > limit);
  while (full != 0) {
    const int q = __ffs(full) - 1;
    full &= full - 1;
    stream_merge(keys, counts, thresholds, q, k, lane);
  }
}

template <typename Element, int NT>
__global__ void __launch_bounds__(kStreamThreads, NT == 1 ? 2 : 1) stream_topk_kernel(StreamParams p) {
  constexpr int kQueries = 8 * NT;
  extern __shared__ __align__(128) unsigned char smem[];
  const StreamShared layout = stream_shared_layout(p.ld, kQueries, sizeof(Element));
  Element* queries = reinterpret_cast<Element*>(smem + layout.queries);
  uint64_t* thresholds = reinterpret_cast<uint64_t*>(smem + layout.thresholds);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  uint64_t* keys = reinterpret_cast<uint64_t*>(smem + layout.keys) + warp * kQueries * kStreamSlot;
  int* counts = reinterpret_cast<int*>(smem + layout.counts) + warp * kQueries;
  const int64_t query_stride = stream_query_stride(p.ld);
  const int64_t first_query = static_cast<int64_t>(blockIdx.x) * kQueries;
  const int valid_queries = static_cast<int>(min(static_cast<int64_t>(kQueries), p.n_queries - first_query));

  // Stage the queries (zero past the valid ones and past ld), clear every list and threshold.
  const int64_t vectors_per_query = query_stride / 8;
  for (int64_t v = threadIdx.x; v < kQueries * vectors_per_query; v += kStreamThreads) {
    const int q = static_cast<int>(v / vectors_per_query);
    const int64_t column = (v % vectors_per_query) * 8;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (q < valid_queries && column < p.ld) {
      value = *reinterpret_cast<const uint4*>(static_cast<const Element*>(p.queries) + (first_query + q) * p.ld +
                                              column);
    }
    *reinterpret_cast<uint4*>(queries + q * query_stride + column) = value;
  }
  uint64_t* all_keys = reinterpret_cast<uint64_t*>(smem + layout.keys);
  for (int i = threadIdx.x; i < kStreamWarps * kQueries * kStreamSlot; i += kStreamThreads) all_keys[i] = 0;
  int* all_counts = reinterpret_cast<int*>(smem + layout.counts);
  for (int i = threadIdx.x; i < kStreamWarps * kQueries; i += kStreamThreads) all_counts[i] = 0;
  for (int i = threadIdx.x; i < kQueries; i += kStreamThreads) thresholds[i] = 0;
  __syncthreads();

  StreamWarp<Element, NT> w{p, queries, query_stride, 0, 0, valid_queries, lane, nullptr, 0, {}};
  const int64_t split_begin = p.row_begin + static_cast<int64_t>(blockIdx.y) * p.rows_per_split;
  w.start(split_begin, min(p.row_end, split_begin + p.rows_per_split));
  const int64_t n_tiles =
      w.split_end > w.split_begin ? (w.split_end - w.split_begin + kStreamTileRows - 1) / kStreamTileRows : 0;
  const int steps = static_cast<int>((p.ld + 31) / 32);
  const int padded_steps = (steps + kStreamDepth - 1) / kStreamDepth * kStreamDepth;
  const int merge_limit = kStreamSlot - kStreamList - kStreamTileRows;

  // A ring of kStreamDepth steps in registers, running on from one of the warp's tiles into the next.
  StreamStep ring[kStreamDepth];
#pragma unroll
  for (int s = 0; s < kStreamDepth; ++s) w.load(ring[s], warp, s);
  for (int64_t tile = warp; tile < n_tiles; tile += kStreamWarps) {
    for (int kb0 = 0; kb0 < padded_steps; kb0 += kStreamDepth) {
#pragma unroll
      for (int s = 0; s < kStreamDepth; ++s) {
        const int kb = kb0 + s;
        if (kb < steps) w.multiply(ring[s], kb);
        const bool next_tile = kb + kStreamDepth >= padded_steps;
        w.load(ring[s], next_tile ? tile + kStreamWarps : tile, next_tile ? kb + kStreamDepth - padded_steps
                                                                          : kb + kStreamDepth);
      }
    }
    w.offer(tile, keys, counts, thresholds);
    __syncwarp();
    stream_merge_full<kQueries>(keys, counts, thresholds, valid_queries, p.k, merge_limit, lane);
  }
  stream_merge_full<kQueries>(keys, counts, thresholds, valid_queries, p.k, 0, lane);
  __syncthreads();

  // Combine: query q's k best of the warps' lists, by warp q % kStreamWarps.
  uint64_t* scratch = reinterpret_cast<uint64_t*>(smem + layout.scratch) + warp * kStreamWarps * kStreamList;
  constexpr int kCombined = kStreamWarps * kStreamList;
  for (int q = warp; q < valid_queries; q += kStreamWarps) {
    for (int i = lane; i < kCombined; i += 32) {
      const int j = i % kStreamList;
      scratch[i] = j < p.k ? all_keys[((i / kStreamList) * kQueries + q) * kStreamSlot + j] : 0;
    }
    __syncwarp();
    warp_sort_descending(scratch, kCombined, lane);
    uint64_t* out = p.partial + ((first_query + q) * p.n_splits + blockIdx.y) * p.k;
    if (lane < p.k) out[lane] = scratch[lane];
    __syncwarp();
  }
}

}  // namespace relmem::gpu::kernels
