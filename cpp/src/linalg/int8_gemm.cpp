#include "int8_gemm.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "relmem/common.hpp"

namespace relmem::gemm {
namespace {

constexpr int kPanelWidth = Int8Matrix::kPanelWidth;
constexpr int kTileRows = 12;  // 24 zmm accumulators, as in the fp32 AVX-512 tile
constexpr int64_t kParallelMinProduct = int64_t{1} << 27;  // ~4x the fp32 threshold: vpdpbusd does 4x the work
constexpr int64_t kRowBlockBytes = 256 * 1024;            // packed u8 rows of A, kept in L2 while the panels pass

// Where row `row`'s first group goes in tiles of k bytes per row (its next groups follow every 4 * kTileRows
// bytes).
int64_t tile_offset(int row, int k) {
  return static_cast<int64_t>(row / kTileRows) * kTileRows * k + 4 * (row % kTileRows);
}

// Bytes for `count` rows of k bytes, in whole tiles. A last tile's missing rows are never read (the kernel is
// instantiated per row count), so they stay unset.
std::size_t tile_bytes(int count, int k) {
  return static_cast<std::size_t>((count + kTileRows - 1) / kTileRows) * kTileRows * k;
}

struct Tile {
  int steps;  // k / 4
  const uint8_t* a;
  const int8_t* b;
  int rows;
  int cols;
  int32_t* raw;  // exact accumulators when set, else dequantized into c
  float* c;
  int64_t ldc;
  const float* row_scales;
  const int32_t* row_zero_points;
  const float* col_scales;
  const int32_t* col_sums;
  const float* bias;
  bool accumulate;
  bool relu;
};
using TileFn = void (*)(const Tile&);

template <int kRows>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void tile_vnni_rows(const Tile& t) {
  __m512i lo[kRows], hi[kRows];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) lo[r] = hi[r] = _mm512_setzero_si512();
  const uint8_t* a = t.a;
  const int8_t* b = t.b;
  for (int p = 0; p < t.steps; ++p, a += 4 * kTileRows, b += 4 * kPanelWidth) {
    _mm_prefetch(reinterpret_cast<const char*>(b + 1024), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 1088), _MM_HINT_T0);
    const __m512i b_lo = _mm512_loadu_si512(b);
    const __m512i b_hi = _mm512_loadu_si512(b + 64);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      int32_t group;
      std::memcpy(&group, a + 4 * r, 4);
      const __m512i x = _mm512_set1_epi32(group);
      lo[r] = _mm512_dpbusd_epi32(lo[r], x, b_lo);
      hi[r] = _mm512_dpbusd_epi32(hi[r], x, b_hi);
    }
  }
  const __mmask16 mask_lo = t.cols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << t.cols) - 1);
  const __mmask16 mask_hi = t.cols >= 32 ? 0xFFFF : t.cols > 16 ? static_cast<__mmask16>((1u << (t.cols - 16)) - 1) : 0;
  if (t.raw) {
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      _mm512_mask_storeu_epi32(t.raw + r * t.ldc, mask_lo, lo[r]);
      _mm512_mask_storeu_epi32(t.raw + r * t.ldc + 16, mask_hi, hi[r]);
    }
    return;
  }
  const __m512 zero = _mm512_setzero_ps();
  const __m512 scale_lo = _mm512_maskz_loadu_ps(mask_lo, t.col_scales);
  const __m512 scale_hi = _mm512_maskz_loadu_ps(mask_hi, t.col_scales + 16);
  const __m512i sums_lo = _mm512_maskz_loadu_epi32(mask_lo, t.col_sums);
  const __m512i sums_hi = _mm512_maskz_loadu_epi32(mask_hi, t.col_sums + 16);
  const __m512 bias_lo = t.bias ? _mm512_maskz_loadu_ps(mask_lo, t.bias) : zero;
  const __m512 bias_hi = t.bias ? _mm512_maskz_loadu_ps(mask_hi, t.bias + 16) : zero;
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    float* row = t.c + r * t.ldc;
    // (sum q_a q_b - zero point * sum q_b) * row scale * column scale
    const __m512i zero_point = _mm512_set1_epi32(t.row_zero_points[r]);
    const __m512 row_scale = _mm512_set1_ps(t.row_scales[r]);
    const __m512i exact_lo = _mm512_sub_epi32(lo[r], _mm512_mullo_epi32(zero_point, sums_lo));
    const __m512i exact_hi = _mm512_sub_epi32(hi[r], _mm512_mullo_epi32(zero_point, sums_hi));
    __m512 v_lo = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact_lo), _mm512_mul_ps(row_scale, scale_lo), bias_lo);
    __m512 v_hi = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact_hi), _mm512_mul_ps(row_scale, scale_hi), bias_hi);
    if (t.accumulate) {
      v_lo = _mm512_add_ps(v_lo, _mm512_maskz_loadu_ps(mask_lo, row));
      v_hi = _mm512_add_ps(v_hi, _mm512_maskz_loadu_ps(mask_hi, row + 16));
    }
    if (t.relu) {
      v_lo = _mm512_mask_max_ps(v_lo, 0xFFFF, v_lo, zero);
      v_hi = _mm512_mask_max_ps(v_hi, 0xFFFF, v_hi, zero);
    }
    _mm512_mask_storeu_ps(row, mask_lo, v_lo);
    _mm512_mask_storeu_ps(row + 16, mask_hi, v_hi);
  }
}

template <int... kRows>
constexpr std::array<TileFn, sizeof...(kRows)> vnni_tiles(std::integer_sequence<int, kRows...>) {
  return {tile_vnni_rows<kRows + 1>...};
}
constexpr auto kVnniTiles = vnni_tiles(std::make_integer_sequence<int, kTileRows>{});

// One row of k values to u8, written in tile order from `q`: q = round(x / scale) + zero point, over the range of
// its values and 0. A last partial group of 4 is padded with the zero point (the quantized 0).
__attribute__((target("avx512f"))) void quantize_row(const float* x, int k, uint8_t* q, float& scale,
                                                      int32_t& zero_point) {
  __m512 low = _mm512_setzero_ps(), high = _mm512_setzero_ps();
  for (int j = 0; j < k; j += 16) {
    const __mmask16 mask = k - j >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (k - j)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(mask, x + j);
    low = _mm512_min_ps(low, v);
    high = _mm512_max_ps(high, v);
  }
  const float min = _mm512_reduce_min_ps(low), max = _mm512_reduce_max_ps(high);
  scale = max > min ? (max - min) / 255.0f : 1.0f;
  zero_point = static_cast<int32_t>(std::lrint(-min / scale));
  const __m512 inverse = _mm512_set1_ps(1.0f / scale);
  const __m512 offset = _mm512_set1_ps(static_cast<float>(zero_point));
  const __m512i zero = _mm512_setzero_si512();
  for (int j = 0; j < k; j += 16) {
    const __mmask16 mask = k - j >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (k - j)) - 1);
    const __m512 v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, x + j), inverse, offset);
    const __m512i rounded = _mm512_max_epi32(_mm512_cvtps_epi32(v), zero);
    const __m128i bytes = _mm512_cvtusepi32_epi8(rounded);  // saturated to 255
    uint8_t* group = q + static_cast<int64_t>(j / 4) * 4 * kTileRows;
    const int groups = (std::min(16, k - j) + 3) / 4;
    _mm_storeu_si32(group, bytes);
    if (groups > 1) _mm_storeu_si32(group + 4 * kTileRows, _mm_srli_si128(bytes, 4));
    if (groups > 2) _mm_storeu_si32(group + 8 * kTileRows, _mm_srli_si128(bytes, 8));
    if (groups > 3) _mm_storeu_si32(group + 12 * kTileRows, _mm_srli_si128(bytes, 12));
  }
}

// A block of rows of A, as the kernel reads them.
struct RowsBlock {
  const uint8_t* tiles;
  const float* scales;
  const int32_t* zero_points;
};

struct Output {
  int32_t* raw;
  float* c;
  int64_t ldc;
  Epilogue epilogue;
};

// A block of rows of A (prepared by `prepare(first row, rows)`, which returns where they lie) stays in L2 while every
// panel passes. With `threads` the panels are shared out among the OpenMP threads when the product pays for it.
template <typename Prepare>
void multiply_blocks(int m, const Int8Matrix& b, const Output& out, bool threads, Prepare prepare) {
  const int k = b.k();
  const int panels = (b.n() + kPanelWidth - 1) / kPanelWidth;
  const int block_rows =
      std::max(kTileRows, static_cast<int>(kRowBlockBytes / std::max(k, 1)) / kTileRows * kTileRows);
  const bool parallel =
      threads && !omp_in_parallel() && panels > 1 && int64_t{m} * b.n() * k >= kParallelMinProduct;
  RowsBlock block{};
#pragma omp parallel if (parallel)
  for (int first_row = 0; first_row < m; first_row += block_rows) {
    const int rows = std::min(block_rows, m - first_row);
#pragma omp single
    block = prepare(first_row, rows);
#pragma omp for schedule(static)
    for (int p = 0; p < panels; ++p) {
      const int col = p * kPanelWidth;
      Tile t{};
      t.steps = k / 4;
      t.b = b.panel(p);
      t.cols = std::min(kPanelWidth, b.n() - col);
      t.ldc = out.ldc;
      t.col_scales = b.column_scales() + col;
      t.col_sums = b.column_sums() + col;
      t.bias = out.epilogue.bias ? out.epilogue.bias + col : nullptr;
      t.accumulate = out.epilogue.accumulate;
      t.relu = out.epilogue.relu;
      for (int row = 0; row < rows; row += kTileRows) {
        t.a = block.tiles + static_cast<int64_t>(row) * k;
        t.rows = std::min(kTileRows, rows - row);
        const int64_t offset = (first_row + row) * out.ldc + col;
        if (out.raw) {
          t.raw = out.raw + offset;
        } else {
          t.c = out.c + offset;
          t.row_scales = block.scales + row;
          t.row_zero_points = block.zero_points + row;
        }
        kVnniTiles[static_cast<std::size_t>(t.rows - 1)](t);
      }
    }
  }
}

// Steps [first_step, k / 4) of one column, and its last partial group of 4 padded with zeros, to `out` (the column's
// place in its panel); returns the sum of those values.
int32_t pack_column_rest(const int8_t* column, int k, int first_step, int8_t* out) {
  const int whole = k / 4;
  for (int p = first_step; p < whole; ++p) std::memcpy(out + p * 4 * kPanelWidth, column + 4 * p, 4);
  if (4 * whole != k) {
    int8_t last[4] = {0, 0, 0, 0};
    std::memcpy(last, column + 4 * whole, static_cast<std::size_t>(k - 4 * whole));
    std::memcpy(out + whole * 4 * kPanelWidth, last, 4);
  }
  int32_t sum = 0;
  for (int j = 4 * first_step; j < k; ++j) sum += column[j];
  return sum;
}

// 16 columns' first steps, 16 at a time: 16 loads of 64 bytes (16 steps of one column each) transposed as a 16 x 16
// matrix of 4-byte groups into 16 stores (one step of the 16 columns each), with each column's sum accumulated by
// vpdpbusd against ones. Returns the steps done (a multiple of 16); sums[i] gets those steps' sum of column i.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) int pack_16_columns(const int8_t* columns, int64_t stride, int k,
                                                                         int8_t* out, int32_t* sums) {
  const int steps = k / 4 / 16 * 16;
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i total = _mm512_setzero_si512();
  for (int p = 0; p < steps; p += 16) {
    __m512i v[16], t[16];
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) v[c] = _mm512_loadu_si512(columns + c * stride + 4 * p);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {  // v[4i + j]: 128-bit lane L holds step 4L + j of columns 4i .. 4i + 3
      v[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
      v[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
      v[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
      v[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512i w0 = _mm512_shuffle_i32x4(v[j], v[4 + j], 0x88), w1 = _mm512_shuffle_i32x4(v[j], v[4 + j], 0xDD);
      const __m512i w2 = _mm512_shuffle_i32x4(v[8 + j], v[12 + j], 0x88);
      const __m512i w3 = _mm512_shuffle_i32x4(v[8 + j], v[12 + j], 0xDD);
      const __m512i step[4] = {_mm512_shuffle_i32x4(w0, w2, 0x88), _mm512_shuffle_i32x4(w1, w3, 0x88),
                               _mm512_shuffle_i32x4(w0, w2, 0xDD), _mm512_shuffle_i32x4(w1, w3, 0xDD)};
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {  // step p + 4l + j
        _mm512_storeu_si512(out + (p + 4 * l + j) * 4 * kPanelWidth, step[l]);
        total = _mm512_dpbusd_epi32(total, ones, step[l]);
      }
    }
  }
  _mm512_storeu_si512(sums, total);
  return steps;
}

void check_available() {
  if (!int8_available()) throw Error("the int8 matrix product needs a CPU with AVX512-VNNI");
}

}  // namespace

bool int8_available() {
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  const char* forced = std::getenv("RELMEM_GEMM_KERNEL");
  return supported && !(forced && (std::string(forced) == "avx2" || std::string(forced) == "portable"));
}

void Int8Matrix::pack(const int8_t* data, int k, int n) {
  if (k <= 0 || n <= 0 || k % 4 != 0) throw Error("int8 matrix: k must be a positive multiple of 4");
  k_ = k;
  n_ = n;
  const int panels = (n + kPanelWidth - 1) / kPanelWidth;
  data_.assign(static_cast<std::size_t>(panels) * k * kPanelWidth, 0);
  sums_.assign(n, 0);
  scales_.assign(n, 1.0f);
  for (int r = 0; r < k; ++r) {
    for (int c = 0; c < n; ++c) {
      const int8_t value = data[static_cast<int64_t>(r) * n + c];
      // panel c / 32, step r / 4, 16-column half, column within it, byte r % 4
      const int64_t at = static_cast<int64_t>(c / kPanelWidth) * k * kPanelWidth + (r / 4) * 4 * kPanelWidth +
                         (c % kPanelWidth) * 4 + r % 4;
      data_[at] = value;
      sums_[c] += value;
    }
  }
}

void Int8Matrix::quantize(const float* data, int k, int n) {
  std::vector<float> scales(n, 0.0f);
  for (int r = 0; r < k; ++r)
    for (int c = 0; c < n; ++c) scales[c] = std::max(scales[c], std::fabs(data[static_cast<int64_t>(r) * n + c]));
  for (float& s : scales) s = s > 0.0f ? s / 127.0f : 1.0f;
  std::vector<int8_t> values(static_cast<std::size_t>(k) * n);
  for (int r = 0; r < k; ++r) {
    for (int c = 0; c < n; ++c) {
      const int64_t i = static_cast<int64_t>(r) * n + c;
      values[i] = static_cast<int8_t>(std::clamp<long>(std::lrint(data[i] / scales[c]), -127, 127));
    }
  }
  pack(values.data(), k, n);
  scales_ = std::move(scales);
}

void Int8Matrix::pack_columns(const int8_t* columns, int64_t stride, int n, int k, const float* scales) {
  if (k <= 0 || n <= 0) throw Error("int8 matrix: k and n must be positive");
  k_ = (k + 3) / 4 * 4;
  n_ = n;
  const int panels = (n + kPanelWidth - 1) / kPanelWidth;
  data_.resize(static_cast<std::size_t>(panels) * k_ * kPanelWidth);
  scales_.assign(scales, scales + n);
  sums_.assign(static_cast<std::size_t>(n), 0);
  const bool simd = int8_available();
  for (int c = 0; c < n;) {
    // step p of column c at panel c / 32, offset p * 4 * 32 + (c % 32) * 4
    int8_t* out = data_.data() + static_cast<int64_t>(c / kPanelWidth) * k_ * kPanelWidth + (c % kPanelWidth) * 4;
    if (simd && c % 16 == 0 && n - c >= 16) {
      const int done = pack_16_columns(columns + c * stride, stride, k, out, sums_.data() + c);
      for (int i = 0; i < 16; ++i) sums_[c + i] += pack_column_rest(columns + (c + i) * stride, k, done, out + 4 * i);
      c += 16;
    } else {
      sums_[c] = pack_column_rest(columns + c * stride, k, 0, out);
      ++c;
    }
  }
}

void Int8Rows::pack(const uint8_t* a, int m, int64_t lda, int k) {
  if (k <= 0 || k % 4 != 0) throw Error("int8 rows: k must be a positive multiple of 4");
  m_ = m;
  k_ = k;
  tiles_.resize(tile_bytes(m, k));
  scales_.assign(static_cast<std::size_t>(m), 1.0f);
  zero_points_.assign(static_cast<std::size_t>(m), 0);
  for (int row = 0; row < m; ++row) {
    uint8_t* dst = tiles_.data() + tile_offset(row, k);
    const uint8_t* src = a + row * lda;
    for (int p = 0; p < k / 4; ++p) std::memcpy(dst + static_cast<int64_t>(p) * 4 * kTileRows, src + 4 * p, 4);
  }
}

void Int8Rows::quantize(const float* a, int m, int64_t lda, int k) {
  check_available();  // the quantizer is AVX-512 code too
  if (k <= 0) throw Error("int8 rows: k must be positive");
  m_ = m;
  k_ = (k + 3) / 4 * 4;
  tiles_.resize(tile_bytes(m, k_));
  scales_.resize(static_cast<std::size_t>(m));
  zero_points_.resize(static_cast<std::size_t>(m));
  for (int row = 0; row < m; ++row)
    quantize_row(a + row * lda, k, tiles_.data() + tile_offset(row, k_), scales_[row], zero_points_[row]);
}

uint8_t Int8Rows::value(int row, int col) const {
  return tiles_[static_cast<std::size_t>(tile_offset(row, k_) + (col / 4) * 4 * kTileRows + col % 4)];
}

void multiply_u8s8(const uint8_t* a, int m, int64_t lda, const Int8Matrix& b, int32_t* c, int64_t ldc) {
  check_available();
  if (m <= 0) return;
  thread_local Int8Rows packed_rows;
  Int8Rows& packed = packed_rows;  // the calling thread's buffers, shared by the team
  multiply_blocks(m, b, {c, nullptr, ldc, {}}, true, [&](int first, int rows) {
    packed.pack(a + first * lda, rows, lda, b.k());
    return RowsBlock{packed.tiles(0), packed.scales(0), packed.zero_points(0)};
  });
}

void multiply_u8s8_reference(const uint8_t* a, int m, int64_t lda, const int8_t* b, int k, int n, int32_t* c,
                             int64_t ldc) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int p = 0; p < k; ++p) sum += int32_t{a[i * lda + p]} * int32_t{b[static_cast<int64_t>(p) * n + j]};
      c[i * ldc + j] = sum;
    }
  }
}

void multiply_quantized(const float* a, int m, int64_t lda, const Int8Matrix& b, float* c, int64_t ldc,
                        const Epilogue& epilogue) {
  check_available();
  if (m <= 0) return;
  thread_local Int8Rows quantized_rows;
  Int8Rows& quantized = quantized_rows;  // the calling thread's buffers, shared by the team
  multiply_blocks(m, b, {nullptr, c, ldc, epilogue}, true, [&](int first, int rows) {
    quantized.quantize(a + first * lda, rows, lda, b.k());
    return RowsBlock{quantized.tiles(0), quantized.scales(0), quantized.zero_points(0)};
  });
}

void multiply_quantized(const Int8Rows& a, const Int8Matrix& b, float* c, int64_t ldc) {
  check_available();
  if (a.k() != b.k()) throw Error("int8 product: A has " + std::to_string(a.k()) + " columns, B " +
                                  std::to_string(b.k()) + " rows");
  if (a.m() <= 0) return;
  multiply_blocks(a.m(), b, {nullptr, c, ldc, {}}, false, [&](int first, int) {
    return RowsBlock{a.tiles(first), a.scales(first), a.zero_points(first)};
  });
}

}  // namespace relmem::gemm
