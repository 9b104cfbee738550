#pragma once
// Plain-loop CPU references of the CUDA kernels in kernels/ (same inputs, same outputs, same
// tie-breaking), kept deliberately simple like llm.c's reference implementations.
#include <cstdint>
#include <vector>

#include "relmem/device/precision.hpp"

namespace relmem::gpu {

// kernels/normalize_convert.cu: each of n rows scaled to unit length (when normalize; zero rows stay
// zero), then rounded to `precision`. out holds n * dim floats.
void normalize_convert_reference(const float* in, int64_t n, int dim, bool normalize,
                                 Precision precision, float* out);

// kernels/topk_fused.cu: top-k keys (topk_keys.hpp) of every query against rows [row_begin, row_end)
// (and mask[row] != 0 when mask is given), scores accumulated in float. out has n_queries * k keys,
// best first, padded with kPaddingKey.
void fused_topk_reference(const float* queries, int64_t n_queries, const float* rows, int dim,
                          int64_t row_begin, int64_t row_end, const uint8_t* mask, int k,
                          uint64_t* out);

// kernels/topk_select.cu (tile selection): top-k keys of each row of a score tile
// scores[q * ld + j] (j < n_columns), where column j is stored row first_row + j. Rows with
// mask[first_row + j] == 0 are skipped when mask is given.
void tile_select_reference(const float* scores, int64_t n_queries, int64_t n_columns, int64_t ld,
                           int64_t first_row, const uint8_t* mask, int k, uint64_t* out);

// kernels/topk_select.cu (merge): top-k of n_lists lists of k keys per query, lists[(q * n_lists + l) * k + i].
void merge_topk_reference(const uint64_t* lists, int64_t n_queries, int n_lists, int k, uint64_t* out);

// The k largest of `keys`, best first, padded with kPaddingKey.
std::vector<uint64_t> top_keys(std::vector<uint64_t> keys, int k);

}  // namespace relmem::gpu
