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

// One row against kQueries queries. The row is read once, front to back (one sequential stream per thread, which
// the hardware prefetcher follows best), and every 16 values are widened once and multiplied with every query's.
// With few queries the sums are split over kSplit accumulators per query, so that the FMA latency does not bound
// the pace at which the row streams in.
template <RowType kType, int kQueries>
RELMEM_SCAN_TARGET void row_against_queries(const RowsView& rows, int64_t row_number, const float* queries,
                                            float* out) {
  constexpr int kSplit = kQueries == 1 ? 4 : kQueries == 2 ? 2 : 1;
  const int dim = rows.dim;
  const size_t row_bytes = static_cast<size_t>(dim) * (kType == RowType::FP32 ? 4 : kType == RowType::FP16 ? 2 : 1);
  const uint8_t* row = rows.codes + static_cast<size_t>(row_number) * row_bytes;
  __m512 acc[kQueries][kSplit];
  for (int q = 0; q < kQueries; ++q)
    for (int s = 0; s < kSplit; ++s) acc[q][s] = _mm512_setzero_ps();
  constexpr __mmask16 kAll = 0xFFFF;
  int j = 0;
  for (; j + 16 * kSplit <= dim; j += 16 * kSplit)
    for (int s = 0; s < kSplit; ++s) {
      const __m512 values = load16<kType>(row, j + 16 * s, kAll);
      for (int q = 0; q < kQueries; ++q)
        acc[q][s] = _mm512_fmadd_ps(values, _mm512_loadu_ps(queries + static_cast<int64_t>(q) * dim + j + 16 * s),
                                    acc[q][s]);
    }
  for (; j < dim; j += 16) {
    const __mmask16 mask = dim - j >= 16 ? kAll : static_cast<__mmask16>((1u << (dim - j)) - 1);
    const __m512 values = load16<kType>(row, j, mask);
    for (int q = 0; q < kQueries; ++q)
      acc[q][0] = _mm512_fmadd_ps(values, _mm512_maskz_loadu_ps(mask, queries + static_cast<int64_t>(q) * dim + j),
                                  acc[q][0]);
  }
  const float scale = kType == RowType::INT8 ? rows.scales[row_number] : 1.0f;
  for (int q = 0; q < kQueries; ++q) {
    __m512 total = acc[q][0];
    for (int s = 1; s < kSplit; ++s) total = _mm512_add_ps(total, acc[q][s]);
    out[q] = sum_lanes(total) * scale;
  }
}

// Rows begin, begin + 1, ... when `listed` is null, else listed[0], listed[1], ...; the queries four at a time.
template <RowType kType>
RELMEM_SCAN_TARGET void score_typed(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count,
                                    const float* queries, int n_queries, float* out) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = listed ? listed[i] : begin + i;
    float* row_out = out + i * n_queries;
    int q = 0;
    for (; q + 4 <= n_queries; q += 4)
      row_against_queries<kType, 4>(rows, row, queries + static_cast<int64_t>(q) * rows.dim, row_out + q);
    const float* rest = queries + static_cast<int64_t>(q) * rows.dim;
    switch (n_queries - q) {
      case 3: row_against_queries<kType, 3>(rows, row, rest, row_out + q); break;
      case 2: row_against_queries<kType, 2>(rows, row, rest, row_out + q); break;
      case 1: row_against_queries<kType, 1>(rows, row, rest, row_out + q); break;
      default: break;
    }
  }
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
