// The training GEMM helper: the CPU multiplier against plain loops, the CUDA one against the CPU one
// (skipped without a GPU), and the clear error when CUDA is unavailable.
#include <gtest/gtest.h>

#include <limits>

#include "relmem/linalg/matrix_multiplier.hpp"
#include "test_gpu_util.hpp"

using namespace relmem;
using namespace relmem::gpu;

namespace {

// C = alpha op(A) op(B) + beta C in plain loops (double accumulation).
RowMatrix naive_gemm(Transpose ta, Transpose tb, float alpha, const RowMatrix& a, const RowMatrix& b, float beta,
                     const RowMatrix& c) {
  const RowMatrix op_a = ta == Transpose::Yes ? RowMatrix(a.transpose()) : a;
  const RowMatrix op_b = tb == Transpose::Yes ? RowMatrix(b.transpose()) : b;
  RowMatrix out(op_a.rows(), op_b.cols());
  for (Eigen::Index i = 0; i < out.rows(); ++i)
    for (Eigen::Index j = 0; j < out.cols(); ++j) {
      double sum = 0;
      for (Eigen::Index l = 0; l < op_a.cols(); ++l) sum += static_cast<double>(op_a(i, l)) * op_b(l, j);
      out(i, j) = static_cast<float>(alpha * sum + (beta == 0.0f ? 0.0 : beta * c(i, j)));
    }
  return out;
}

struct Case {
  Transpose ta, tb;
  float alpha, beta;
};

const Case kCases[] = {{Transpose::No, Transpose::No, 1.0f, 0.0f},
                       {Transpose::No, Transpose::Yes, 0.5f, 1.0f},
                       {Transpose::Yes, Transpose::No, -2.0f, 0.25f},
                       {Transpose::Yes, Transpose::Yes, 1.0f, -1.0f}};

void check_against_naive(MatrixMultiplier& multiplier) {
  const int m = 37, n = 21, k = 50;
  for (const Case& c : kCases) {
    const bool ta = c.ta == Transpose::Yes;
    const bool tb = c.tb == Transpose::Yes;
    const RowMatrix a = relmem_test::random_matrix(ta ? k : m, ta ? m : k, 1);
    const RowMatrix b = relmem_test::random_matrix(tb ? n : k, tb ? k : n, 2);
    RowMatrix out = relmem_test::random_matrix(m, n, 3);
    const RowMatrix expected = naive_gemm(c.ta, c.tb, c.alpha, a, b, c.beta, out);
    multiplier.gemm(c.ta, c.tb, c.alpha, a, b, c.beta, out);
    ASSERT_EQ(out.rows(), m);
    ASSERT_EQ(out.cols(), n);
    EXPECT_LT((out - expected).cwiseAbs().maxCoeff(), 1e-4f) << multiplier.device();
  }
}

}  // namespace

TEST(CpuMatrixMultiplier, MatchesPlainLoops) {
  auto multiplier = make_matrix_multiplier("cpu");
  EXPECT_EQ(multiplier->device(), "cpu");
  check_against_naive(*multiplier);
}

TEST(CpuMatrixMultiplier, BetaZeroIgnoresOldContentsAndResizes) {
  auto multiplier = make_cpu_matrix_multiplier();
  const RowMatrix a = relmem_test::random_matrix(3, 4, 1);
  const RowMatrix b = relmem_test::random_matrix(4, 2, 2);
  RowMatrix c = RowMatrix::Constant(7, 7, std::numeric_limits<float>::quiet_NaN());
  multiplier->gemm(Transpose::No, Transpose::No, 1.0f, a, b, 0.0f, c);
  EXPECT_EQ(c.rows(), 3);
  EXPECT_TRUE(c.allFinite());
  EXPECT_LT((c - a * b).cwiseAbs().maxCoeff(), 1e-5f);
}

TEST(CpuMatrixMultiplier, RejectsMismatchedShapes) {
  auto multiplier = make_cpu_matrix_multiplier();
  const RowMatrix a = relmem_test::random_matrix(3, 4, 1);
  const RowMatrix b = relmem_test::random_matrix(5, 2, 2);
  RowMatrix c(3, 2);
  EXPECT_THROW(multiplier->gemm(Transpose::No, Transpose::No, 1.0f, a, b, 0.0f, c), Error);
  RowMatrix wrong(2, 2);
  const RowMatrix b_ok = relmem_test::random_matrix(4, 2, 2);
  EXPECT_THROW(multiplier->gemm(Transpose::No, Transpose::No, 1.0f, a, b_ok, 1.0f, wrong), Error);
  RowMatrix square = relmem_test::random_matrix(4, 4, 3);
  EXPECT_THROW(multiplier->gemm(Transpose::No, Transpose::No, 1.0f, square, square, 0.0f, square), Error);
  EXPECT_THROW(make_matrix_multiplier("tpu"), Error);
  EXPECT_THROW(make_matrix_multiplier("cuda:x"), Error);
}

TEST(CudaMatrixMultiplier, FailsClearlyWithoutADevice) {
  if (relmem_test::have_gpu()) GTEST_SKIP() << "a CUDA device is present";
  try {
    make_matrix_multiplier("cuda");
    FAIL() << "created a CUDA multiplier without a device";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("CUDA"), std::string::npos) << error.what();
  }
}

TEST(CudaMatrixMultiplier, MatchesTheCpuMultiplier) {
  RELMEM_SKIP_WITHOUT_GPU();
  auto cuda = make_matrix_multiplier("cuda");
  EXPECT_EQ(cuda->device(), "cuda:0");
  check_against_naive(*cuda);
  // Identical semantics on the edge cases too: beta = 0 over NaN, an empty inner dimension.
  auto cpu = make_cpu_matrix_multiplier();
  const RowMatrix a(3, 0), b(0, 2);
  RowMatrix from_cpu = RowMatrix::Constant(3, 2, 2.0f), from_cuda = from_cpu;
  cpu->gemm(Transpose::No, Transpose::No, 1.0f, a, b, 0.5f, from_cpu);
  cuda->gemm(Transpose::No, Transpose::No, 1.0f, a, b, 0.5f, from_cuda);
  EXPECT_EQ(from_cuda, from_cpu);
  RowMatrix nan_c = RowMatrix::Constant(2, 2, std::numeric_limits<float>::quiet_NaN());
  const RowMatrix x = relmem_test::random_matrix(2, 3, 4);
  cuda->gemm(Transpose::No, Transpose::Yes, 1.0f, x, x, 0.0f, nan_c);
  EXPECT_TRUE(nan_c.allFinite());
}
