#pragma once
// C = alpha * op(A) * op(B) + beta * C on row-major float matrices, on the CPU (Eigen) or on a CUDA
// device (cuBLAS SGEMM, no TF32), with identical semantics: the training code picks one with
// make_matrix_multiplier(device) and calls gemm() for its forward and backward products.
#include <memory>
#include <string>

#include "relmem/common.hpp"

namespace relmem::gpu {

enum class Transpose { No, Yes };

class MatrixMultiplier {
 public:
  virtual ~MatrixMultiplier() = default;
  virtual std::string device() const = 0;
  // When beta == 0, c is resized to the product's shape and its old contents are ignored (even NaN);
  // otherwise c must already have that shape. Shape mismatches are relmem::Error.
  virtual void gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const RowMatrix& a,
                    const RowMatrix& b, float beta, RowMatrix& c) = 0;
};

// "cpu", "cuda" (device 0) or "cuda:N".
std::unique_ptr<MatrixMultiplier> make_matrix_multiplier(const std::string& device);
std::unique_ptr<MatrixMultiplier> make_cpu_matrix_multiplier();
// Throws relmem::Error when relmem was built without CUDA or the device is not usable.
std::unique_ptr<MatrixMultiplier> make_cuda_matrix_multiplier(int device);

// Checks the operands of gemm() (inner dimensions, C's shape when beta != 0, C not aliasing A or B)
// and, when beta == 0, resizes C to the product's shape (contents left undefined). Inline because the
// CUDA library (kernels/) uses it too and must not depend on relmem's own objects.
inline void prepare_gemm_output(Transpose transpose_a, Transpose transpose_b, const RowMatrix& a,
                                const RowMatrix& b, float beta, RowMatrix& c) {
  if (&c == &a || &c == &b) throw Error("gemm: C must not be the same matrix as A or B");
  const Eigen::Index rows = transpose_a == Transpose::Yes ? a.cols() : a.rows();
  const Eigen::Index inner_a = transpose_a == Transpose::Yes ? a.rows() : a.cols();
  const Eigen::Index inner_b = transpose_b == Transpose::Yes ? b.cols() : b.rows();
  const Eigen::Index cols = transpose_b == Transpose::Yes ? b.rows() : b.cols();
  if (inner_a != inner_b) {
    throw Error("gemm: inner dimensions differ (" + std::to_string(inner_a) + " vs " +
                std::to_string(inner_b) + ")");
  }
  if (beta == 0.0f) {
    c.resize(rows, cols);
  } else if (c.rows() != rows || c.cols() != cols) {
    throw Error("gemm: C is " + std::to_string(c.rows()) + "x" + std::to_string(c.cols()) +
                " but the product is " + std::to_string(rows) + "x" + std::to_string(cols));
  }
}

}  // namespace relmem::gpu
