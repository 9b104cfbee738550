#include "packed_gemm.hpp"

#include <immintrin.h>
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <utility>
#include <cstdlib>
#include <string>

#include "relmem/device/precision.hpp"

namespace relmem::gemm {
namespace {

// One micro-tile of C: `rows` (<= the kernel's tile height) x `cols` (<= panel width), from a packed tile of A
// (k steps of tile-height floats) and one panel of B (k steps of panel-width floats).
struct Tile {
  int k;
  const float* a;
  const void* b;  // float or fp16 values, as the tile function reads them
  float* c;
  int64_t ldc;
  int rows;
  int cols;
  const float* bias;  // at the panel's first column, or null
  bool accumulate;
  bool relu;
};
using TileFn = void (*)(const Tile&);

__attribute__((target("avx512f"))) inline __m512 load16(const float* b) { return _mm512_loadu_ps(b); }
__attribute__((target("avx512f"))) inline __m512 load16(const uint16_t* b) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
}
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const float* b) { return _mm256_loadu_ps(b); }
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const uint16_t* b) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
}

// AVX-512: up to 12 rows x 32 columns, 24 zmm accumulators. Instantiated per row count, so that a short last tile
// (e.g. the 3 leftover tokens of a 15-token question) costs 3 rows of multiply-adds, not 12.
constexpr int kAvx512Rows = 12;
template <int kRows, typename Value>
__attribute__((target("avx512f"))) void tile_avx512_rows(const Tile& t) {
  __m512 lo[kRows], hi[kRows];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  const float* a = t.a;
  const Value* b = static_cast<const Value*>(t.b);
  for (int p = 0; p < t.k; ++p, a += kAvx512Rows, b += 32) {
    // The panel streams from L2; fetching 8 steps ahead keeps the FMAs fed (about +25% measured).
    _mm_prefetch(reinterpret_cast<const char*>(b + 256), _MM_HINT_T0);
    if constexpr (sizeof(Value) == 4) _mm_prefetch(reinterpret_cast<const char*>(b + 272), _MM_HINT_T0);
    const __m512 b_lo = load16(b);
    const __m512 b_hi = load16(b + 16);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      const __m512 x = _mm512_set1_ps(a[r]);
      lo[r] = _mm512_fmadd_ps(x, b_lo, lo[r]);
      hi[r] = _mm512_fmadd_ps(x, b_hi, hi[r]);
    }
  }
  const __mmask16 mask_lo = t.cols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << t.cols) - 1);
  const __mmask16 mask_hi = t.cols >= 32 ? 0xFFFF : t.cols > 16 ? static_cast<__mmask16>((1u << (t.cols - 16)) - 1) : 0;
  const __m512 zero = _mm512_setzero_ps();
  const __m512 bias_lo = t.bias ? _mm512_maskz_loadu_ps(mask_lo, t.bias) : zero;
  const __m512 bias_hi = t.bias ? _mm512_maskz_loadu_ps(mask_hi, t.bias + 16) : zero;
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
    float* row = t.c + r * t.ldc;
    __m512 v_lo = _mm512_add_ps(lo[r], bias_lo);
    __m512 v_hi = _mm512_add_ps(hi[r], bias_hi);
    if (t.accumulate) {
      v_lo = _mm512_add_ps(v_lo, _mm512_maskz_loadu_ps(mask_lo, row));
      v_hi = _mm512_add_ps(v_hi, _mm512_maskz_loadu_ps(mask_hi, row + 16));
    }
    if (t.relu) {
      v_lo = _mm512_mask_max_ps(v_lo, 0xFFFF, v_lo, zero);  // _mm512_max_ps trips -Wmaybe-uninitialized (GCC 12)
      v_hi = _mm512_mask_max_ps(v_hi, 0xFFFF, v_hi, zero);
    }
    _mm512_mask_storeu_ps(row, mask_lo, v_lo);
    _mm512_mask_storeu_ps(row + 16, mask_hi, v_hi);
  }
}

// AVX2 + FMA: up to 6 rows x 16 columns, 12 ymm accumulators; per row count like the AVX-512 tile.
constexpr int kAvx2Rows = 6;
alignas(32) const int32_t kLaneMasks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

template <int kRows, typename Value>
__attribute__((target("avx2,fma,f16c"))) void tile_avx2_rows(const Tile& t) {
  __m256 lo[kRows], hi[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  const float* a = t.a;
  const Value* b = static_cast<const Value*>(t.b);
  for (int p = 0; p < t.k; ++p, a += kAvx2Rows, b += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(b + 128), _MM_HINT_T0);
    const __m256 b_lo = load8(b);
    const __m256 b_hi = load8(b + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r);
      lo[r] = _mm256_fmadd_ps(x, b_lo, lo[r]);
      hi[r] = _mm256_fmadd_ps(x, b_hi, hi[r]);
    }
  }
  const int n_lo = std::min(t.cols, 8), n_hi = std::max(0, std::min(t.cols - 8, 8));
  const __m256i mask_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneMasks + 8 - n_lo));
  const __m256i mask_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneMasks + 8 - n_hi));
  const __m256 zero = _mm256_setzero_ps();
  const __m256 bias_lo = t.bias ? _mm256_maskload_ps(t.bias, mask_lo) : zero;
  const __m256 bias_hi = t.bias ? _mm256_maskload_ps(t.bias + 8, mask_hi) : zero;
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    float* row = t.c + r * t.ldc;
    __m256 v_lo = _mm256_add_ps(lo[r], bias_lo);
    __m256 v_hi = _mm256_add_ps(hi[r], bias_hi);
    if (t.accumulate) {
      v_lo = _mm256_add_ps(v_lo, _mm256_maskload_ps(row, mask_lo));
      v_hi = _mm256_add_ps(v_hi, _mm256_maskload_ps(row + 8, mask_hi));
    }
    if (t.relu) {
      v_lo = _mm256_max_ps(v_lo, zero);
      v_hi = _mm256_max_ps(v_hi, zero);
    }
    _mm256_maskstore_ps(row, mask_lo, v_lo);
    _mm256_maskstore_ps(row + 8, mask_hi, v_hi);
  }
}

template <typename Value, int... kRows>
constexpr std::array<TileFn, sizeof...(kRows)> avx512_tiles(std::integer_sequence<int, kRows...>) {
  return {tile_avx512_rows<kRows + 1, Value>...};
}
template <typename Value, int... kRows>
constexpr std::array<TileFn, sizeof...(kRows)> avx2_tiles(std::integer_sequence<int, kRows...>) {
  return {tile_avx2_rows<kRows + 1, Value>...};
}
template <typename Value>
void tile_avx512(const Tile& t) {
  static constexpr auto tiles = avx512_tiles<Value>(std::make_integer_sequence<int, kAvx512Rows>{});
  tiles[static_cast<std::size_t>(t.rows - 1)](t);
}
template <typename Value>
void tile_avx2(const Tile& t) {
  static constexpr auto tiles = avx2_tiles<Value>(std::make_integer_sequence<int, kAvx2Rows>{});
  tiles[static_cast<std::size_t>(t.rows - 1)](t);
}

constexpr int64_t kParallelMinProduct =
    int64_t{1} << 25;  // below this many multiply-adds (~0.5 ms) a barrier risks more than it gains
constexpr int64_t kRowBlockBytes = 384 * 1024;  // packed rows of A, kept in L2 while the panels pass

// Rows [first, first + count) of A as tiles of tile_rows interleaved rows (k steps each), the last tile zero-padded.
void pack_rows(const float* a, int64_t lda, int first, int count, int k, int tile_rows, std::vector<float>& out) {
  const int tiles = (count + tile_rows - 1) / tile_rows;
  out.resize(static_cast<std::size_t>(tiles) * tile_rows * k);
  for (int t = 0; t < tiles; ++t) {
    float* dst = out.data() + static_cast<int64_t>(t) * tile_rows * k;
    for (int r = 0; r < tile_rows; ++r) {
      const int row = t * tile_rows + r;
      if (row >= count) {
        for (int p = 0; p < k; ++p) dst[p * tile_rows + r] = 0.0f;
        continue;
      }
      const float* src = a + (first + row) * lda;
      for (int p = 0; p < k; ++p) dst[p * tile_rows + r] = src[p];
    }
  }
}

// A block of packed A rows stays in L2 while every panel of B passes over it, tile by tile.
void multiply_tiled(const float* a, int m, int64_t lda, const PackedMatrix& b, float* c, int64_t ldc,
                    const Epilogue& epilogue, TileFn tile, int tile_rows) {
  const int k = b.k();
  const int width = b.panel_width();
  const int panels = (b.n() + width - 1) / width;
  const int block_rows =
      std::max(tile_rows, static_cast<int>(kRowBlockBytes / (4 * std::max(k, 1))) / tile_rows * tile_rows);
  const bool parallel = !omp_in_parallel() && panels > 1 && int64_t{m} * b.n() * k >= kParallelMinProduct;
  thread_local std::vector<float> packed_rows;
  std::vector<float>& packed = packed_rows;  // the calling thread's buffer, shared by the team below
#pragma omp parallel if (parallel)
  for (int first_row = 0; first_row < m; first_row += block_rows) {
    const int rows = std::min(block_rows, m - first_row);
#pragma omp single
    pack_rows(a, lda, first_row, rows, k, tile_rows, packed);
#pragma omp for schedule(static)
    for (int p = 0; p < panels; ++p) {
      const int col = p * width;
      Tile t{k,
             nullptr,
             b.storage() == Storage::kHalf ? static_cast<const void*>(b.half_panel(p)) : b.panel(p),
             nullptr,
             ldc,
             0,
             std::min(width, b.n() - col),
             epilogue.bias ? epilogue.bias + col : nullptr,
             epilogue.accumulate,
             epilogue.relu};
      for (int row = 0; row < rows; row += tile_rows) {
        t.a = packed.data() + static_cast<int64_t>(row) * k;
        t.c = c + (first_row + row) * ldc + col;
        t.rows = std::min(tile_rows, rows - row);
        tile(t);
      }
    }
  }
}

void multiply_eigen(const float* a, int m, int64_t lda, const PackedMatrix& b, float* c, int64_t ldc,
                    const Epilogue& epilogue) {
  using Strided = Eigen::OuterStride<>;
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const Matrix, 0, Strided> lhs(a, m, b.k(), Strided(lda));
  const Eigen::Map<const Matrix> rhs(b.panel(0), b.k(), b.n());
  Eigen::Map<Matrix, 0, Strided> out(c, m, b.n(), Strided(ldc));
  if (epilogue.accumulate) {
    out.noalias() += lhs * rhs;
  } else {
    out.noalias() = lhs * rhs;
  }
  if (epilogue.bias) out.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(epilogue.bias, b.n());
  if (epilogue.relu) out = out.cwiseMax(0.0f);
}

Kernel detect_kernel() {
  __builtin_cpu_init();
  Kernel kernel = Kernel::kPortable;
  if (__builtin_cpu_supports("avx512f")) {
    kernel = Kernel::kAvx512;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
    kernel = Kernel::kAvx2;
  }
  const char* forced = std::getenv("RELMEM_GEMM_KERNEL");
  if (forced && std::string(forced) == "portable") kernel = Kernel::kPortable;
  if (forced && std::string(forced) == "avx2" && kernel == Kernel::kAvx512) kernel = Kernel::kAvx2;
  return kernel;
}

}  // namespace

Kernel best_kernel() {
  static const Kernel kernel = detect_kernel();
  return kernel;
}

const char* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kAvx512:
      return "avx512";
    case Kernel::kAvx2:
      return "avx2";
    default:
      return "eigen";
  }
}

void PackedMatrix::pack(const float* data, int k, int n, int64_t row_stride, int64_t col_stride, Kernel kernel,
                        Storage storage) {
  k_ = k;
  n_ = n;
  kernel_ = kernel;
  storage_ = kernel == Kernel::kPortable ? Storage::kFloat : storage;
  width_ = kernel == Kernel::kAvx512 ? 32 : kernel == Kernel::kAvx2 ? 16 : std::max(n, 1);
  const int panels = (n + width_ - 1) / width_;
  const std::size_t size = static_cast<std::size_t>(panels) * k * width_;
  if (storage_ == Storage::kHalf) {
    halves_.assign(size, 0);
    data_.clear();
  } else {
    data_.assign(size, 0.0f);
    halves_.clear();
  }
  for (int p = 0; p < panels; ++p) {
    const int cols = std::min(width_, n - p * width_);
    const int64_t first = static_cast<int64_t>(p) * k * width_;
    for (int r = 0; r < k; ++r) {
      const float* in = data + r * row_stride + static_cast<int64_t>(p) * width_ * col_stride;
      const int64_t out = first + static_cast<int64_t>(r) * width_;
      for (int j = 0; j < cols; ++j) {
        if (storage_ == Storage::kHalf) {
          halves_[static_cast<std::size_t>(out + j)] = gpu::float_to_half_bits(in[j * col_stride]);
        } else {
          data_[static_cast<std::size_t>(out + j)] = in[j * col_stride];
        }
      }
    }
  }
}

void multiply(const float* a, int m, int64_t lda, const PackedMatrix& b, float* c, int64_t ldc,
              const Epilogue& epilogue) {
  if (m <= 0 || b.n() <= 0) return;
  switch (b.kernel()) {
    case Kernel::kAvx512:
      return multiply_tiled(a, m, lda, b, c, ldc, epilogue,
                            b.storage() == Storage::kHalf ? tile_avx512<uint16_t> : tile_avx512<float>, kAvx512Rows);
    case Kernel::kAvx2:
      return multiply_tiled(a, m, lda, b, c, ldc, epilogue,
                            b.storage() == Storage::kHalf ? tile_avx2<uint16_t> : tile_avx2<float>, kAvx2Rows);
    default:
      return multiply_eigen(a, m, lda, b, c, ldc, epilogue);
  }
}

}  // namespace relmem::gemm
