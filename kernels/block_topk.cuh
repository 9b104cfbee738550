#pragma once
// Per-query top-k kept by one thread block in shared memory, shared by the fused and the selection
// kernels. Each query slot owns 2L keys: a list of the best L seen so far (sorted, best first) and a
// buffer of L candidates. Candidates beating the current k-th best are appended to the buffer with
// a shared-memory atomic; between tiles, a warp merges a slot whose buffer might not hold another
// tile's worth (bitonic sort of list + buffer). So the block never needs more than 2L keys per query,
// whatever the number of rows it scans. Keys are topk_keys.hpp's: larger is better, 0 is padding.
#include <cstdint>

#include "kernel_launch.hpp"

namespace relmem::gpu::kernels {

struct BlockTopK {
  uint64_t* keys;        // [group][2 * list_length]
  int* counts;           // [group] candidates in each buffer
  uint64_t* thresholds;  // [group] current k-th best key (0 until k candidates were merged)
  int list_length;
  int group;
  int k;

  // Shared memory for `group` slots, 16-byte aligned.
  static __host__ __device__ size_t bytes(int group, int list_length) {
    return static_cast<size_t>(group) * 2 * list_length * sizeof(uint64_t) + kMaxGroup * sizeof(uint64_t) +
           kMaxGroup * sizeof(int);
  }

  static __device__ BlockTopK carve(unsigned char* shared, int group, int list_length, int k) {
    BlockTopK state;
    state.keys = reinterpret_cast<uint64_t*>(shared);
    state.thresholds = state.keys + static_cast<size_t>(group) * 2 * list_length;
    state.counts = reinterpret_cast<int*>(state.thresholds + kMaxGroup);
    state.list_length = list_length;
    state.group = group;
    state.k = k;
    return state;
  }

  // All threads; followed by __syncthreads() before the first offer.
  __device__ void reset() {
    for (int i = threadIdx.x; i < group * 2 * list_length; i += blockDim.x) keys[i] = 0;
    for (int i = threadIdx.x; i < group; i += blockDim.x) {
      counts[i] = 0;
      thresholds[i] = 0;
    }
  }

  __device__ __forceinline__ void offer(int slot, uint64_t key) {
    if (key > thresholds[slot]) {
      const int position = atomicAdd(&counts[slot], 1);
      keys[(static_cast<size_t>(slot) * 2 + 1) * list_length + position] = key;
    }
  }

  // All threads, after a tile of at most `tile_capacity` offers per slot (or with final = true after
  // the last one): merges every slot that could overflow during the next tile (or, when final, every
  // slot with candidates). Starts and ends with __syncthreads().
  __device__ void flush(int tile_capacity, bool final) {
    __syncthreads();
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int limit = final ? 0 : list_length - tile_capacity;
    for (int slot = warp; slot < group; slot += blockDim.x / 32) {
      const int count = counts[slot];
      if (count > limit) merge(slot, count, lane);
    }
    __syncthreads();
  }

  // Best `k` keys of a slot (valid after a final flush).
  __device__ const uint64_t* best(int slot) const { return keys + static_cast<size_t>(slot) * 2 * list_length; }

 private:
  // One warp: pads the buffer, sorts list + buffer (2L keys) best first, resets the buffer.
  __device__ void merge(int slot, int count, int lane) {
    uint64_t* a = keys + static_cast<size_t>(slot) * 2 * list_length;
    const int n = 2 * list_length;
    for (int i = list_length + count + lane; i < n; i += 32) a[i] = 0;
    __syncwarp();
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
    if (lane == 0) {
      thresholds[slot] = a[k - 1];
      counts[slot] = 0;
    }
    __syncwarp();
  }
};

}  // namespace relmem::gpu::kernels
