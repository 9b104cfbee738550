#include "relmem/linalg/matrix_multiplier.hpp"

#include "relmem/device/cuda_device.hpp"

namespace relmem::gpu {
namespace {

class CpuMatrixMultiplier : public MatrixMultiplier {
 public:
  std::string device() const override { return "cpu"; }

  void gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const RowMatrix& a,
            const RowMatrix& b, float beta, RowMatrix& c) override {
    prepare_gemm_output(transpose_a, transpose_b, a, b, beta, c);
    if (beta == 0.0f) {
      c.setZero();
    } else if (beta != 1.0f) {
      c *= beta;
    }
    const bool ta = transpose_a == Transpose::Yes;
    const bool tb = transpose_b == Transpose::Yes;
    if (!ta && !tb) c.noalias() += alpha * a * b;
    if (!ta && tb) c.noalias() += alpha * a * b.transpose();
    if (ta && !tb) c.noalias() += alpha * a.transpose() * b;
    if (ta && tb) c.noalias() += alpha * a.transpose() * b.transpose();
  }
};

}  // namespace

std::unique_ptr<MatrixMultiplier> make_cpu_matrix_multiplier() { return std::make_unique<CpuMatrixMultiplier>(); }

std::unique_ptr<MatrixMultiplier> make_matrix_multiplier(const std::string& device) {
  if (device == "cpu") return make_cpu_matrix_multiplier();
  return make_cuda_matrix_multiplier(parse_cuda_device(device));
}

}  // namespace relmem::gpu
