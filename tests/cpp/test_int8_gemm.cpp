// The AVX512-VNNI int8 product behind "use-lite-int8" and the int8 index's batches: exact integer accumulators
// against the scalar reference on random matrices (partial tiles and panels, wide leading dimensions), B packed from
// its columns with any k, rows quantized once, the quantized float product within its rounding bound, and clear
// errors. Tests that run the kernel skip on CPUs without VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../cpp/src/linalg/int8_gemm.hpp"
#include "relmem/common.hpp"
#include "test_util.hpp"

using namespace relmem::gemm;

namespace {

#define REQUIRE_VNNI() \
  if (!int8_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI"

}  // namespace

TEST(Int8Gemm, VnniMatchesTheScalarReferenceExactly) {
  REQUIRE_VNNI();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  const int shapes[][3] = {{1, 4, 1}, {5, 8, 3}, {12, 64, 32}, {13, 36, 47}, {37, 100, 70}, {100, 256, 96},
                           {7, 1536, 40}, {300, 512, 65}};
  for (const auto& shape : shapes) {
    const int m = shape[0], k = shape[1], n = shape[2];
    const int64_t lda = k + 5, ldc = n + 3;
    std::vector<uint8_t> a(static_cast<std::size_t>(m) * lda);
    std::vector<int8_t> b(static_cast<std::size_t>(k) * n);
    for (auto& v : a) v = static_cast<uint8_t>(u8(rng));
    for (auto& v : b) v = static_cast<int8_t>(s8(rng));
    Int8Matrix packed;
    packed.pack(b.data(), k, n);
    std::vector<int32_t> got(static_cast<std::size_t>(m) * ldc, -7), want(got.size(), -7);
    multiply_u8s8(a.data(), m, lda, packed, got.data(), ldc);
    multiply_u8s8_reference(a.data(), m, lda, b.data(), k, n, want.data(), ldc);
    EXPECT_EQ(got, want) << m << "x" << k << "x" << n;  // padding columns untouched as well
  }
}

TEST(Int8Gemm, ExtremeValuesDoNotSaturate) {
  REQUIRE_VNNI();
  const int m = 3, k = 1536, n = 33;
  std::vector<uint8_t> a(static_cast<std::size_t>(m) * k, 255);
  std::vector<int8_t> b(static_cast<std::size_t>(k) * n, -128);
  for (int c = 0; c < n; c += 2)
    for (int r = 0; r < k; ++r) b[static_cast<std::size_t>(r) * n + c] = 127;
  Int8Matrix packed;
  packed.pack(b.data(), k, n);
  std::vector<int32_t> got(static_cast<std::size_t>(m) * n), want(got.size());
  multiply_u8s8(a.data(), m, k, packed, got.data(), n);
  multiply_u8s8_reference(a.data(), m, k, b.data(), k, n, want.data(), n);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[0], 255 * 127 * k);
  EXPECT_EQ(got[1], -255 * 128 * k);
}

// Each output may differ from the float product by the rounding of both operands: with a row scale s_a and a
// column scale s_b, |error| <= s_a / 2 * sum |b| + s_b / 2 * sum |a| + k s_a s_b / 4 (plus float rounding).
TEST(Int8Gemm, QuantizedProductStaysWithinTheRoundingBound) {
  REQUIRE_VNNI();
  std::mt19937 rng(11);
  const int shapes[][3] = {{1, 4, 1}, {13, 36, 47}, {40, 256, 96}, {9, 1536, 70}};
  for (const auto& shape : shapes) {
    const int m = shape[0], k = shape[1], n = shape[2];
    const int64_t lda = k + 2, ldc = n + 1;
    auto a = relmem_test::normal_values(static_cast<std::size_t>(m) * lda, rng);
    for (int i = 0; i < m; ++i) a[i * lda] += 3.0f;  // rows with an offset, so their zero points differ
    const auto b = relmem_test::normal_values(static_cast<std::size_t>(k) * n, rng);
    const auto bias = relmem_test::normal_values(n, rng);
    const auto initial = relmem_test::normal_values(static_cast<std::size_t>(m) * ldc, rng);
    Int8Matrix packed;
    packed.quantize(b.data(), k, n);
    for (int variant = 0; variant < 3; ++variant) {
      const bool accumulate = variant >= 1, relu = variant == 2;
      std::vector<float> c = initial;
      multiply_quantized(a.data(), m, lda, packed, c.data(), ldc, {bias.data(), accumulate, relu});
      for (int i = 0; i < m; ++i) {
        const float* row = a.data() + i * lda;
        const float low = std::min(0.0f, *std::min_element(row, row + k));
        const float high = std::max(0.0f, *std::max_element(row, row + k));
        const double row_scale = (high - low) / 255.0;
        double sum_a = 0.0;
        for (int p = 0; p < k; ++p) sum_a += std::fabs(row[p]);
        for (int j = 0; j < n; ++j) {
          double want = bias[j], sum_b = 0.0, max_b = 0.0;
          for (int p = 0; p < k; ++p) {
            const double w = b[static_cast<std::size_t>(p) * n + j];
            want += row[p] * w;
            sum_b += std::fabs(w);
            max_b = std::max(max_b, std::fabs(w));
          }
          if (accumulate) want += initial[i * ldc + j];
          if (relu) want = std::max(want, 0.0);
          const double col_scale = max_b / 127.0;
          const double bound = row_scale / 2 * sum_b + col_scale / 2 * sum_a + k * row_scale * col_scale / 4 +
                               1e-5 * (sum_a * max_b + 1.0);
          ASSERT_NEAR(c[i * ldc + j], want, bound) << m << "x" << k << "x" << n << " variant " << variant;
        }
      }
    }
  }
}

// B packed from strided columns (as an int8 store keeps its rows) with k not a multiple of 4: zero padding, so a
// product with A's padding columns set to anything equals the reference over the real k.
TEST(Int8Gemm, PackedColumnsMatchTheReferenceForAnyK) {
  REQUIRE_VNNI();
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> u8(0, 255), s8(-127, 127);
  const int shapes[][3] = {{1, 1, 1}, {3, 3, 5}, {13, 37, 33}, {25, 100, 64}, {12, 513, 70}};
  for (const auto& shape : shapes) {
    const int m = shape[0], k = shape[1], n = shape[2];
    const int k4 = (k + 3) / 4 * 4;
    const int64_t stride = k + 7;
    std::vector<int8_t> columns(static_cast<std::size_t>(n) * stride), b(static_cast<std::size_t>(k) * n);
    std::vector<float> scales(n);
    for (auto& v : columns) v = static_cast<int8_t>(s8(rng));
    for (int c = 0; c < n; ++c) {
      scales[c] = 0.5f + c;
      for (int r = 0; r < k; ++r) b[static_cast<std::size_t>(r) * n + c] = columns[c * stride + r];
    }
    Int8Matrix packed;
    packed.pack_columns(columns.data(), stride, n, k, scales.data());
    ASSERT_EQ(packed.k(), k4);
    for (int c = 0; c < n; ++c) {
      EXPECT_EQ(packed.column_scales()[c], scales[c]);
      int32_t sum = 0;
      for (int r = 0; r < k; ++r) sum += columns[c * stride + r];
      EXPECT_EQ(packed.column_sums()[c], sum);
    }
    std::vector<uint8_t> a(static_cast<std::size_t>(m) * k4);
    for (auto& v : a) v = static_cast<uint8_t>(u8(rng));
    std::vector<int32_t> got(static_cast<std::size_t>(m) * n), want(got.size());
    multiply_u8s8(a.data(), m, k4, packed, got.data(), n);
    multiply_u8s8_reference(a.data(), m, k4, b.data(), k, n, want.data(), n);
    EXPECT_EQ(got, want) << m << "x" << k << "x" << n;
  }
}

// Rows quantized once (any k, padded with their zero point) and multiplied on the calling thread: each output is
// exactly (sum (u8 - zero point) * s8) * row scale * column scale, and the same as quantizing on the fly.
TEST(Int8Gemm, RowsQuantizedOnceGiveTheScalarQuantizedArithmetic) {
  REQUIRE_VNNI();
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> s8(-127, 127);
  const int shapes[][3] = {{1, 3, 1}, {13, 37, 33}, {40, 100, 64}, {256, 512, 40}};
  for (const auto& shape : shapes) {
    const int m = shape[0], k = shape[1], n = shape[2];
    const int64_t lda = k + 3;
    auto a = relmem_test::normal_values(static_cast<std::size_t>(m) * lda, rng);
    for (int i = 0; i < m; ++i) a[i * lda] += 2.0f;  // off-centre rows: their zero points differ
    std::vector<int8_t> columns(static_cast<std::size_t>(n) * k);
    for (auto& v : columns) v = static_cast<int8_t>(s8(rng));
    std::vector<float> scales(n);
    for (int c = 0; c < n; ++c) scales[c] = 0.01f * (c + 1);
    Int8Matrix b;
    b.pack_columns(columns.data(), k, n, k, scales.data());
    Int8Rows rows;
    rows.quantize(a.data(), m, lda, k);
    ASSERT_EQ(rows.m(), m);
    ASSERT_EQ(rows.k(), b.k());
    const int64_t ldc = n + 2;
    std::vector<float> c(static_cast<std::size_t>(m) * ldc, -7.0f);
    multiply_quantized(rows, b, c.data(), ldc);
    for (int i = 0; i < m; ++i) {
      for (int p = k; p < rows.k(); ++p) EXPECT_EQ(rows.value(i, p), rows.zero_point(i));
      // The row's values come back from its u8 codes within half a step.
      for (int p = 0; p < k; ++p)
        ASSERT_NEAR((rows.value(i, p) - rows.zero_point(i)) * rows.scale(i), a[i * lda + p], rows.scale(i) * 0.5001f);
      for (int j = 0; j < n; ++j) {
        int64_t raw = 0;
        for (int p = 0; p < k; ++p) raw += int64_t{rows.value(i, p) - rows.zero_point(i)} * columns[j * k + p];
        EXPECT_EQ(c[i * ldc + j], static_cast<float>(raw) * (rows.scale(i) * scales[j])) << i << ", " << j;
      }
      EXPECT_EQ(c[i * ldc + n], -7.0f);  // past n: untouched
    }
    if (k % 4 == 0) {
      std::vector<float> on_the_fly(c.size(), -7.0f);
      multiply_quantized(a.data(), m, lda, b, on_the_fly.data(), ldc);
      EXPECT_EQ(on_the_fly, c) << m << "x" << k << "x" << n;
    }
  }
}

TEST(Int8Gemm, RowsAndMatrixMustAgreeOnK) {
  REQUIRE_VNNI();
  const std::vector<float> a(2 * 8, 1.0f);
  const std::vector<int8_t> columns(3 * 12, 1);
  const std::vector<float> scales(3, 1.0f);
  Int8Rows rows;
  rows.quantize(a.data(), 2, 8, 8);
  Int8Matrix b;
  b.pack_columns(columns.data(), 12, 3, 12, scales.data());
  std::vector<float> c(6);
  EXPECT_THROW(multiply_quantized(rows, b, c.data(), 3), relmem::Error);
}

TEST(Int8Gemm, KMustBeAMultipleOfFour) {
  const std::vector<int8_t> b(6 * 2, 1);
  Int8Matrix packed;
  EXPECT_THROW(packed.pack(b.data(), 6, 2), relmem::Error);
}

TEST(Int8Gemm, ForcingANonAvx512KernelMakesItUnavailable) {
  ::setenv("RELMEM_GEMM_KERNEL", "avx2", 1);
  EXPECT_FALSE(int8_available());
  const std::vector<int8_t> b(4 * 2, 1);
  const std::vector<float> a(4, 1.0f);
  std::vector<float> c(2);
  Int8Matrix packed;
  packed.pack(b.data(), 4, 2);
  EXPECT_THROW(multiply_quantized(a.data(), 1, 4, packed, c.data(), 2), relmem::Error);
  Int8Rows rows;
  EXPECT_THROW(rows.quantize(a.data(), 1, 4, 4), relmem::Error);
  ::unsetenv("RELMEM_GEMM_KERNEL");
}
