#pragma once
// Host-side entry points of the CUDA kernels (compiled by nvcc, called from the C++ store).
// Each returns the launch status; the CPU reference of each kernel is named beside it
// (relmem/index/gpu/reference_kernels.hpp). Device arrays of stored vectors and queries are
// row-major with a leading dimension `ld` that is a multiple of 8 elements, zero-padded past dim.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "relmem/device/precision.hpp"

namespace relmem::gpu::kernels {

constexpr int kThreads = 256;       // threads per block of the selection kernels
constexpr int kMaxGroup = 64;       // most queries one selection block keeps a top-k for
constexpr int kTileRows = 64;       // rows scored (or score columns read) between two merges
constexpr int kMergeFanIn = 16;    // lists one merge block takes in the first of two rounds
constexpr int kMergeRoundLists = 128;     // lists one merge block takes in a single round
constexpr int kMergeRankCapacity = 1024;  // candidates a merge block ranks directly (shared memory)
constexpr int kSlotBudget = 8192;   // queries per block * slot length: 64 KiB of keys in shared memory

// Per query, a slot of keys: its best `list_length` so far (a power of two >= k, at least 16), then a buffer of
// candidates that holds at least one tile's offers; `slot_length` (a power of two) holds both. `group`: queries per
// block.
struct SelectLayout {
  int k = 0;
  int list_length = 0;
  int slot_length = 0;
  int group = 0;
};

inline SelectLayout select_layout(int k) {
  SelectLayout layout;
  layout.k = k;
  layout.list_length = 16;
  while (layout.list_length < k) layout.list_length *= 2;
  layout.slot_length = layout.list_length;
  while (layout.slot_length < layout.list_length + kTileRows) layout.slot_length *= 2;
  layout.group = kSlotBudget / layout.slot_length < kMaxGroup ? kSlotBudget / layout.slot_length : kMaxGroup;
  return layout;
}

inline int64_t padded_ld(int dim) { return (static_cast<int64_t>(dim) + 7) / 8 * 8; }

// normalize_convert.cu --------------------------------------------------------------------------
// out row i (ld out_ld, `precision`) = in row i (dim floats), scaled to unit length when normalize
// (zero rows stay zero), zero-padded to out_ld. Reference: normalize_convert_reference.
cudaError_t normalize_convert(const float* in, int64_t n, int dim, bool normalize, Precision precision,
                              void* out, int64_t out_ld, cudaStream_t stream);
// out (n * dim floats) = rows [0, n) of `stored` widened to float.
cudaError_t widen_rows(const void* stored, int64_t n, int64_t ld, int dim, Precision precision,
                       float* out, cudaStream_t stream);
// dst row i = src row rows[i], rows of row_bytes bytes (a multiple of 16).
cudaError_t gather_rows(const void* src, const int64_t* rows, int64_t n, int64_t row_bytes, void* dst,
                        cudaStream_t stream);

// topk_fused.cu ---------------------------------------------------------------------------------
struct FusedTopkArgs {
  const void* queries = nullptr;  // n_queries rows, ld elements each
  int64_t n_queries = 0;
  const void* rows = nullptr;     // stored vectors, ld elements each
  int64_t ld = 0;
  int64_t row_begin = 0;
  int64_t row_end = 0;
  const uint8_t* mask = nullptr;  // one byte per stored row (absolute index), or null
  int k = 0;
  int n_splits = 0;               // the row range is cut into this many contiguous splits
  uint64_t* partial = nullptr;    // [n_queries][n_splits][k] keys, best first per list
};
// One pass over the rows: every block scores a tile of rows against its group of queries (tensor
// cores for fp16/bf16 when tensor_cores, CUDA cores otherwise) and keeps each query's top-k in
// shared memory; the score matrix never reaches global memory. fp16/bf16 rows with k <= kStreamMaxK
// take the streaming kernel (topk_stream.cu). Reference: fused_topk_reference (per split).
cudaError_t fused_topk(const FusedTopkArgs& args, Precision precision, bool tensor_cores,
                       cudaStream_t stream);
// Queries per block of fused_topk (blocks cover the queries in groups of this many), and how many of its blocks
// one multiprocessor runs at once.
int fused_group(int k, int64_t n_queries, Precision precision, int64_t ld, bool tensor_cores);
int fused_blocks_per_multiprocessor(int k, int64_t n_queries, Precision precision, int64_t ld, bool tensor_cores);

// topk_stream.cu --------------------------------------------------------------------------------
constexpr int kStreamMaxK = 16;
// Whether fused_topk takes the streaming kernel: fp16/bf16 rows, k <= kStreamMaxK, and its shared memory fits.
bool stream_applies(int k, int64_t n_queries, Precision precision, int64_t ld);
int stream_group(int64_t n_queries);
int stream_blocks_per_multiprocessor(int64_t n_queries, Precision precision, int64_t ld);
cudaError_t stream_topk(const FusedTopkArgs& args, Precision precision, cudaStream_t stream);

// topk_select.cu --------------------------------------------------------------------------------
struct TileSelectArgs {
  const float* scores = nullptr;  // [n_queries][ld] row-major score tile
  int64_t n_queries = 0;
  int64_t ld = 0;
  int64_t n_columns = 0;          // column j scores stored row first_row + j
  int64_t first_row = 0;
  const uint8_t* mask = nullptr;
  int k = 0;
  int n_splits = 0;               // columns cut into this many splits, one list each
  uint64_t* partial = nullptr;    // [n_queries][n_lists][k]; writes lists first_list .. + n_splits
  int n_lists = 0;
  int first_list = 0;
  bool seed_from_list0 = false;   // list 0 holds the top-k so far: a candidate must beat its k-th key
};
// Top-k of each query's tile row. Reference: tile_select_reference (per split).
cudaError_t tile_select(const TileSelectArgs& args, cudaStream_t stream);

// out + q * out_stride gets the top-k of the n_lists lists of k keys of query q,
// lists[(q * n_lists + l) * k + i]. Many lists are merged in two rounds, the first writing into `lists`; out may
// be `lists` itself (list 0 of each query is then overwritten after all of that query's lists were read).
// Reference: merge_topk_reference.
cudaError_t merge_topk(uint64_t* lists, int64_t n_queries, int n_lists, int k, uint64_t* out, int64_t out_stride,
                       cudaStream_t stream);

// gemm_sort_baseline.cu -------------------------------------------------------------------------
// Baseline selection by sorting: scores [n_segments][segment_length] are sorted descending per
// segment with cub::DeviceSegmentedRadixSort; out[s * k + i] = key of the i-th best (row
// first_row + column), padding past segment_length. n_segments * segment_length < 2^31.
// Call with temp == nullptr to get temp_bytes; `values` and `sorted` are scratch of
// n_segments * segment_length ints and floats, `offsets` of n_segments + 1 ints.
cudaError_t sort_select(const float* scores, int64_t n_segments, int64_t segment_length,
                        int64_t first_row, int k, float* sorted, int* values, int* sorted_values,
                        int* offsets, void* temp, size_t& temp_bytes, uint64_t* out,
                        cudaStream_t stream);

}  // namespace relmem::gpu::kernels
