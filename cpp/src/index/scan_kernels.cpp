#include "scan_kernels.hpp"

#include <immintrin.h>

#include "../linalg/packed_gemm.hpp"

namespace relmem::scan {
namespace {

#define RELMEM_SCAN_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

// Sixteen values of a row from index j, widened to fp32; lanes outside `mask` are zero.
template <RowType kType>
RELMEM_SCAN_TARGET inline __m512 load16(const uint8_t* row, int j, __mmask16 mask) {
  if constexpr (kType == RowType::FP32) {
    return _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(row) + j);
  } else if constexpr (kType == RowType::FP16) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, reinterpret_cast<const uint16_t*>(row) + j));
  } else {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, row + j)));
  }
}

// The sum of the sixteen lanes. The zero-masked shuffles are the plain ones with every lane kept: the unmasked
// intrinsics (and _mm512_reduce_add_ps) trip GCC 12's -Wuninitialized on their undefined pass-through operand.
RELMEM_SCAN_TARGET inline float sum_lanes(__m512 v) {
  constexpr __mmask16 kAll = 0xFFFF;
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, 0x4E));
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, 0xB1));
  v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, 0x4E));
  v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, 0xB1));
  return _mm512_cvtss_f32(v);
}

// kRows rows x kQueries queries: every row vector loaded once per step, every query vector once per step.
template <RowType kType, int kRows, int kQueries>
RELMEM_SCAN_TARGET void tile(const RowsView& rows, const int64_t* row_numbers, const float* queries, int n_queries,
                             float* out) {
  const int dim = rows.dim;
  const uint8_t* row[kRows];
  for (int r = 0; r < kRows; ++r) row[r] = rows.row(row_numbers[r]);
  __m512 acc[kRows][kQueries];
  for (int r = 0; r < kRows; ++r)
    for (int q = 0; q < kQueries; ++q) acc[r][q] = _mm512_setzero_ps();
  for (int j = 0; j < dim; j += 16) {
    const __mmask16 mask = dim - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (dim - j)) - 1);
    __m512 values[kRows];
    for (int r = 0; r < kRows; ++r) values[r] = load16<kType>(row[r], j, mask);
    for (int q = 0; q < kQueries; ++q) {
      const __m512 query = _mm512_maskz_loadu_ps(mask, queries + static_cast<int64_t>(q) * dim + j);
      for (int r = 0; r < kRows; ++r) acc[r][q] = _mm512_fmadd_ps(values[r], query, acc[r][q]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    const float scale = kType == RowType::INT8 ? rows.scales[row_numbers[r]] : 1.0f;
    for (int q = 0; q < kQueries; ++q) out[r * n_queries + q] = sum_lanes(acc[r][q]) * scale;
  }
}

// One group of kRows rows against every query, four queries at a time.
template <RowType kType, int kRows>
RELMEM_SCAN_TARGET void rows_against_queries(const RowsView& rows, const int64_t* row_numbers, const float* queries,
                                             int n_queries, float* out) {
  int q = 0;
  for (; q + 4 <= n_queries; q += 4)
    tile<kType, kRows, 4>(rows, row_numbers, queries + static_cast<int64_t>(q) * rows.dim, n_queries, out + q);
  const float* rest = queries + static_cast<int64_t>(q) * rows.dim;
  switch (n_queries - q) {
    case 3: tile<kType, kRows, 3>(rows, row_numbers, rest, n_queries, out + q); break;
    case 2: tile<kType, kRows, 2>(rows, row_numbers, rest, n_queries, out + q); break;
    case 1: tile<kType, kRows, 1>(rows, row_numbers, rest, n_queries, out + q); break;
    default: break;
  }
}

// Rows begin, begin + 1, ... when `listed` is null, else listed[0], listed[1], ...
template <RowType kType>
RELMEM_SCAN_TARGET void score_typed(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count,
                                    const float* queries, int n_queries, float* out) {
  int64_t numbers[4];
  auto rows_from = [&](int64_t i, int n) {
    for (int r = 0; r < n; ++r) numbers[r] = listed ? listed[i + r] : begin + i + r;
    return numbers;
  };
  int64_t i = 0;
  for (; i + 4 <= count; i += 4)
    rows_against_queries<kType, 4>(rows, rows_from(i, 4), queries, n_queries, out + i * n_queries);
  for (; i < count; ++i) rows_against_queries<kType, 1>(rows, rows_from(i, 1), queries, n_queries, out + i * n_queries);
}

void score_any(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count, const float* queries,
               int n_queries, float* out) {
  switch (rows.type) {
    case RowType::FP32: return score_typed<RowType::FP32>(rows, begin, listed, count, queries, n_queries, out);
    case RowType::FP16: return score_typed<RowType::FP16>(rows, begin, listed, count, queries, n_queries, out);
    case RowType::INT8: return score_typed<RowType::INT8>(rows, begin, listed, count, queries, n_queries, out);
  }
}

}  // namespace

bool available() {
  static const bool yes = gemm::best_kernel() == gemm::Kernel::kAvx512 && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return yes;
}

void score_rows(const RowsView& rows, int64_t begin, int64_t count, const float* queries, int n_queries, float* out) {
  score_any(rows, begin, nullptr, count, queries, n_queries, out);
}

void score_listed_rows(const RowsView& rows, const int64_t* row_numbers, int64_t count, const float* query,
                       float* out) {
  score_any(rows, 0, row_numbers, count, query, 1, out);
}

}  // namespace relmem::scan
