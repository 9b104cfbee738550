#include "relmem/index/gpu/reference_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "relmem/index/gpu/topk_keys.hpp"

namespace relmem::gpu {

void normalize_convert_reference(const float* in, int64_t n, int dim, bool normalize,
                                 Precision precision, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float* x = in + i * dim;
    float scale = 1.0f;
    if (normalize) {
      float sum_squares = 0.0f;
      for (int d = 0; d < dim; ++d) sum_squares += x[d] * x[d];
      scale = sum_squares > 0.0f ? 1.0f / std::sqrt(sum_squares) : 0.0f;
    }
    for (int d = 0; d < dim; ++d) out[i * dim + d] = round_to_precision(x[d] * scale, precision);
  }
}

std::vector<uint64_t> top_keys(std::vector<uint64_t> keys, int k) {
  const size_t kept = std::min(keys.size(), static_cast<size_t>(k));
  std::partial_sort(keys.begin(), keys.begin() + kept, keys.end(), std::greater<uint64_t>());
  keys.resize(kept);
  keys.resize(k, kPaddingKey);
  return keys;
}

void fused_topk_reference(const float* queries, int64_t n_queries, const float* rows, int dim,
                          int64_t row_begin, int64_t row_end, const uint8_t* mask, int k,
                          uint64_t* out) {
  for (int64_t q = 0; q < n_queries; ++q) {
    std::vector<uint64_t> keys;
    for (int64_t r = row_begin; r < row_end; ++r) {
      if (mask && !mask[r]) continue;
      float score = 0.0f;
      for (int d = 0; d < dim; ++d) score += queries[q * dim + d] * rows[r * dim + d];
      keys.push_back(make_topk_key(score, static_cast<uint32_t>(r)));
    }
    const std::vector<uint64_t> best = top_keys(std::move(keys), k);
    std::copy(best.begin(), best.end(), out + q * k);
  }
}

void tile_select_reference(const float* scores, int64_t n_queries, int64_t n_columns, int64_t ld,
                           int64_t first_row, const uint8_t* mask, int k, uint64_t* out) {
  for (int64_t q = 0; q < n_queries; ++q) {
    std::vector<uint64_t> keys;
    for (int64_t j = 0; j < n_columns; ++j) {
      const int64_t row = first_row + j;
      if (mask && !mask[row]) continue;
      keys.push_back(make_topk_key(scores[q * ld + j], static_cast<uint32_t>(row)));
    }
    const std::vector<uint64_t> best = top_keys(std::move(keys), k);
    std::copy(best.begin(), best.end(), out + q * k);
  }
}

void merge_topk_reference(const uint64_t* lists, int64_t n_queries, int n_lists, int k, uint64_t* out) {
  for (int64_t q = 0; q < n_queries; ++q) {
    const uint64_t* begin = lists + q * n_lists * k;
    std::vector<uint64_t> keys;
    for (const uint64_t* key = begin; key != begin + static_cast<int64_t>(n_lists) * k; ++key) {
      if (*key != kPaddingKey) keys.push_back(*key);
    }
    const std::vector<uint64_t> best = top_keys(std::move(keys), k);
    std::copy(best.begin(), best.end(), out + q * k);
  }
}

}  // namespace relmem::gpu
