#include <immintrin.h>

#include "scan_isa.hpp"

namespace relmem::scan {
namespace {

#define RELMEM_SCAN_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  // 2 x 8 and 4 x 4 were the fastest tiles here (100,000 x 512): 4 x 4 loads the least per FMA (8 loads for 16).
  static constexpr int kMidRows = 2, kMidQueries = 8;
  static constexpr int kTileRows = 4, kTileQueries = 4;

  RELMEM_SCAN_TARGET static Vec zero() { return _mm512_setzero_ps(); }
  RELMEM_SCAN_TARGET static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  RELMEM_SCAN_TARGET static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  RELMEM_SCAN_TARGET static Vec fmadd(Vec a, Vec b, Vec acc) { return _mm512_fmadd_ps(a, b, acc); }

  template <RowType kType>
  RELMEM_SCAN_TARGET static Vec load_row(const uint8_t* row, int j) {
    if constexpr (kType == RowType::FP32) {
      return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + j);
    } else if constexpr (kType == RowType::FP16) {
      const auto* halves = reinterpret_cast<const uint16_t*>(row) + j;
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(halves)));
    } else {
      return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + j))));
    }
  }

  // The zero-masked shuffles are the plain ones with every lane kept: the unmasked intrinsics (and
  // _mm512_reduce_add_ps) trip GCC 12's -Wuninitialized on their undefined pass-through operand.
  RELMEM_SCAN_TARGET static float sum(Vec v) {
    constexpr __mmask16 kAll = 0xFFFF;
    v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, 0x4E));
    v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, 0xB1));
    v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, 0x4E));
    v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, 0xB1));
    return _mm512_cvtss_f32(v);
  }

  // Zero-masked extracts for the same reason: the casts trip the warning too.
  RELMEM_SCAN_TARGET static __m256 fold(Vec v) {
    return _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, v, 0), _mm512_maskz_extractf32x8_ps(0xFF, v, 1));
  }
};

#include "scan_tiles.hpp"

}  // namespace

void score_avx512(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count, const float* queries,
                  int n_queries, float* out) {
  score_any<Avx512>(rows, begin, listed, count, queries, n_queries, out);
}

}  // namespace relmem::scan
