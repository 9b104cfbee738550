// The packed matrix products behind USE-lite, for every kernel this CPU runs, against a double-precision product:
// partial tiles and panels, strided and transposed sources, bias, accumulation and relu.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../../cpp/src/linalg/packed_gemm.hpp"
#include "relmem/device/precision.hpp"
#include "test_util.hpp"

using namespace relmem::gemm;

namespace {

std::vector<Kernel> runnable_kernels() {
  std::vector<Kernel> kernels = {Kernel::kPortable};
  if (best_kernel() == Kernel::kAvx2 || best_kernel() == Kernel::kAvx512) kernels.push_back(Kernel::kAvx2);
  if (best_kernel() == Kernel::kAvx512) kernels.push_back(Kernel::kAvx512);
  return kernels;
}

}  // namespace

TEST(PackedGemm, MatchesADoublePrecisionProduct) {
  std::mt19937 rng(7);
  const int shapes[][3] = {{1, 1, 1},     {5, 7, 3},      {12, 64, 32}, {13, 33, 47},
                           {37, 100, 70}, {100, 256, 96}, {7, 1536, 40}};
  for (Kernel kernel : runnable_kernels()) {
    for (const auto& shape : shapes) {
      const int m = shape[0], k = shape[1], n = shape[2];
      const int64_t lda = k + 3, ldc = n + 5;  // leading dimensions wider than the matrices
      const auto a = relmem_test::normal_values(static_cast<std::size_t>(m) * lda, rng);
      const auto b = relmem_test::normal_values(static_cast<std::size_t>(k) * n, rng);
      const auto bias = relmem_test::normal_values(n, rng);
      const auto initial = relmem_test::normal_values(static_cast<std::size_t>(m) * ldc, rng);
      for (int variant = 0; variant < 4; ++variant) {
        const bool transposed = variant & 1, accumulate = variant & 2, relu = variant == 3;
        PackedMatrix packed;
        // The same B read row-major or through its transpose's layout (column stride k).
        std::vector<float> source = b;
        if (transposed) {
          for (int r = 0; r < k; ++r)
            for (int c = 0; c < n; ++c)
              source[static_cast<std::size_t>(c) * k + r] = b[static_cast<std::size_t>(r) * n + c];
          packed.pack(source.data(), k, n, 1, k, kernel);
        } else {
          packed.pack(source.data(), k, n, n, 1, kernel);
        }
        std::vector<float> c = initial;
        multiply(a.data(), m, lda, packed, c.data(), ldc, {variant == 0 ? nullptr : bias.data(), accumulate, relu});
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double want = variant == 0 ? 0.0 : bias[j];
            for (int p = 0; p < k; ++p) want += double(a[i * lda + p]) * b[static_cast<std::size_t>(p) * n + j];
            if (accumulate) want += initial[i * ldc + j];
            if (relu) want = std::max(want, 0.0);
            ASSERT_NEAR(c[i * ldc + j], want, 1e-4 * (1 + std::sqrt(double(k))))
                << kernel_name(kernel) << " m=" << m << " k=" << k << " n=" << n << " variant " << variant;
          }
          for (int j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], initial[i * ldc + j]) << "wrote past the columns";
        }
      }
    }
  }
}

TEST(PackedGemm, HalfStorageMultipliesTheRoundedValues) {
  // fp16 panels: the product is that of B rounded to fp16, accumulated in float. The portable kernel keeps floats.
  std::mt19937 rng(5);
  const int shapes[][3] = {{1, 384, 1152}, {15, 384, 384}, {13, 33, 47}, {3, 1536, 40}};
  for (Kernel kernel : runnable_kernels()) {
    for (const auto& shape : shapes) {
      const int m = shape[0], k = shape[1], n = shape[2];
      const auto a = relmem_test::normal_values(static_cast<std::size_t>(m) * k, rng);
      const auto b = relmem_test::normal_values(static_cast<std::size_t>(k) * n, rng);
      const auto bias = relmem_test::normal_values(n, rng);
      PackedMatrix packed;
      packed.pack(b.data(), k, n, n, 1, kernel, Storage::kHalf);
      const bool half = kernel != Kernel::kPortable;
      EXPECT_EQ(packed.storage(), half ? Storage::kHalf : Storage::kFloat) << kernel_name(kernel);
      std::vector<float> c(static_cast<std::size_t>(m) * n);
      multiply(a.data(), m, k, packed, c.data(), n, {bias.data()});
      double largest_rounding = 0;
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double want = bias[j], exact = bias[j];
          for (int p = 0; p < k; ++p) {
            const float value = b[static_cast<std::size_t>(p) * n + j];
            want += double(a[i * k + p]) * (half ? relmem::gpu::round_to_precision(value, relmem::gpu::Precision::FP16)
                                                 : value);
            exact += double(a[i * k + p]) * value;
          }
          ASSERT_NEAR(c[i * n + j], want, 1e-4 * (1 + std::sqrt(double(k))))
              << kernel_name(kernel) << " m=" << m << " k=" << k << " n=" << n;
          largest_rounding = std::max(largest_rounding, std::abs(want - exact));
        }
      }
      if (half) EXPECT_GT(largest_rounding, 1e-4) << "the values were not rounded to fp16";
    }
  }
}

TEST(PackedGemm, EveryTileHeightGivesTheSameRows) {
  // With the packed kernels, each row of C is the same bits whatever the number of rows multiplied with it (every
  // short last tile height), so one question encodes exactly as it does within a batch. (Eigen's fallback switches
  // between matrix-vector and matrix-matrix products, which round differently.)
  std::mt19937 rng(11);
  const int m = 25, k = 70, n = 40;
  const auto a = relmem_test::normal_values(static_cast<std::size_t>(m) * k, rng);
  const auto b = relmem_test::normal_values(static_cast<std::size_t>(k) * n, rng);
  const auto bias = relmem_test::normal_values(n, rng);
  for (Kernel kernel : runnable_kernels()) {
    if (kernel == Kernel::kPortable) continue;
    PackedMatrix packed;
    packed.pack(b.data(), k, n, n, 1, kernel);
    std::vector<float> all(static_cast<std::size_t>(m) * n);
    multiply(a.data(), m, k, packed, all.data(), n, {bias.data(), false, true});
    for (int rows = 1; rows < m; ++rows) {
      std::vector<float> some(static_cast<std::size_t>(rows) * n, -1.0f);
      multiply(a.data(), rows, k, packed, some.data(), n, {bias.data(), false, true});
      for (std::size_t i = 0; i < some.size(); ++i)
        ASSERT_EQ(some[i], all[i]) << kernel_name(kernel) << " rows=" << rows << " element " << i;
    }
  }
}

TEST(PackedGemm, RepackingReusesTheMatrix) {
  std::mt19937 rng(3);
  const auto a = relmem_test::normal_values(4 * 8, rng);
  const auto big = relmem_test::normal_values(8 * 40, rng);
  const auto small = relmem_test::normal_values(8 * 3, rng);
  PackedMatrix packed;
  packed.pack(big.data(), 8, 40, 40, 1);
  packed.pack(small.data(), 8, 3, 3, 1);
  EXPECT_EQ(packed.n(), 3);
  std::vector<float> c(4 * 3);
  multiply(a.data(), 4, 8, packed, c.data(), 3);
  double want = 0;
  for (int p = 0; p < 8; ++p) want += double(a[p]) * small[p * 3];
  EXPECT_NEAR(c[0], want, 1e-4);
}
