#pragma once
// Per-query top-k kept by one thread block in shared memory, shared by the fused and the selection
// kernels. Each query owns a slot of slot_length keys (select_layout): the best list_length seen so
// far (sorted, best first), then a buffer of candidates. Candidates beating the current k-th best are
// appended to the buffer (one shared-memory atomic per warp); between tiles, a warp merges a slot
// whose buffer might not hold another tile's worth (bitonic sort of the whole slot). So the block never
// needs more than slot_length keys per query, whatever the number of rows it scans. Keys are
// topk_keys.hpp's: larger is better, 0 is padding.
#include <cstdint>

#include "kernel_launch.hpp"

namespace relmem::gpu::kernels {

// One warp sorts n keys in shared memory (n a power of two), largest first: a bitonic network, a pair per lane
// per step. Ends with __syncwarp().
__device__ inline void warp_sort_descending(uint64_t* a, int n, int lane) {
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = lane; i < n / 2; i += 32) {
        const int lo = 2 * i - (i & (stride - 1));
        const int hi = lo + stride;
        const uint64_t x = a[lo];
        const uint64_t y = a[hi];
        const bool descending = (lo & size) == 0;
        if (descending ? x < y : x > y) {
          a[lo] = y;
          a[hi] = x;
        }
      }
      __syncwarp();
    }
  }
}

struct BlockTopK {
  uint64_t* keys;        // [group][slot_length]
  int* counts;           // [group] candidates in each buffer
  uint64_t* thresholds;  // [group] current k-th best key (0 until k candidates were merged)
  int list_length;
  int slot_length;
  int group;
  int k;

  // Shared memory for `group` slots, 16-byte aligned.
  static __host__ __device__ size_t bytes(const SelectLayout& layout, int group) {
    return static_cast<size_t>(group) * layout.slot_length * sizeof(uint64_t) + kMaxGroup * sizeof(uint64_t) +
           kMaxGroup * sizeof(int);
  }

  static __device__ BlockTopK carve(unsigned char* shared, const SelectLayout& layout, int group) {
    BlockTopK state;
    state.keys = reinterpret_cast<uint64_t*>(shared);
    state.thresholds = state.keys + static_cast<size_t>(group) * layout.slot_length;
    state.counts = reinterpret_cast<int*>(state.thresholds + kMaxGroup);
    state.list_length = layout.list_length;
    state.slot_length = layout.slot_length;
    state.group = group;
    state.k = layout.k;
    return state;
  }

  // All threads; followed by __syncthreads() before the first offer.
  __device__ void reset() {
    for (int i = threadIdx.x; i < group * slot_length; i += blockDim.x) keys[i] = 0;
    for (int i = threadIdx.x; i < group; i += blockDim.x) {
      counts[i] = 0;
      thresholds[i] = 0;
    }
  }

  // Raises a slot's threshold to a key known to have k better ones elsewhere (one thread per slot, after
  // reset and before the __syncthreads() that precedes the first offer).
  __device__ void seed(int slot, uint64_t threshold) { thresholds[slot] = threshold; }

  // One candidate from every lane of a warp, all for the same slot: one atomic for the warp.
  __device__ __forceinline__ void offer_warp(int slot, uint64_t key, bool valid) {
    const bool take = valid && key > thresholds[slot];
    const unsigned taken = __ballot_sync(0xFFFFFFFFu, take);
    if (taken == 0) return;
    const int lane = threadIdx.x % 32;
    int base = 0;
    if (lane == __ffs(taken) - 1) base = atomicAdd(&counts[slot], __popc(taken));
    base = __shfl_sync(0xFFFFFFFFu, base, __ffs(taken) - 1);
    if (take) {
      const int position = base + __popc(taken & ((1u << lane) - 1));
      keys[static_cast<size_t>(slot) * slot_length + list_length + position] = key;
    }
  }

  // All threads, after a tile of at most `tile_capacity` offers per slot (or with final = true after
  // the last one): merges every slot that could overflow during the next tile (or, when final, every
  // slot with candidates). Starts and ends with __syncthreads().
  __device__ void flush(int tile_capacity, bool final) {
    __syncthreads();
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int limit = final ? 0 : slot_length - list_length - tile_capacity;
    for (int slot = warp; slot < group; slot += blockDim.x / 32) {
      const int count = counts[slot];
      if (count > limit) merge(slot, count, lane);
    }
    __syncthreads();
  }

  // Best `k` keys of a slot (valid after a final flush).
  __device__ const uint64_t* best(int slot) const { return keys + static_cast<size_t>(slot) * slot_length; }

 private:
  // One warp: pads the buffer, sorts the slot best first, resets the buffer.
  __device__ void merge(int slot, int count, int lane) {
    uint64_t* a = keys + static_cast<size_t>(slot) * slot_length;
    for (int i = list_length + count + lane; i < slot_length; i += 32) a[i] = 0;
    __syncwarp();
    warp_sort_descending(a, slot_length, lane);
    if (lane == 0) {
      thresholds[slot] = a[k - 1] > thresholds[slot] ? a[k - 1] : thresholds[slot];  // a seed may be higher
      counts[slot] = 0;
    }
    __syncwarp();
  }
};

}  // namespace relmem::gpu::kernels
