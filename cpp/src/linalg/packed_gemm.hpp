#pragma once
// Single-precision matrix products C = A·B with B packed once (weights, or a batch of queries) into column panels
// for an AVX-512 or AVX2+FMA micro-kernel chosen from the running CPU. The kernels are compiled per function with
// target attributes and picked at run time, so a portable build (RELMEM_NATIVE=OFF) keeps them; other CPUs use Eigen.
#include <cstdint>
#include <vector>

namespace relmem::gemm {

enum class Kernel { kAvx512, kAvx2, kPortable };

// The fastest kernel this CPU runs; RELMEM_GEMM_KERNEL=avx2|portable forces a slower one (for tests and comparisons).
Kernel best_kernel();
const char* kernel_name(Kernel kernel);

// B (k x n) packed for one kernel: panels of panel_width() columns, each k rows of contiguous floats, the last panel
// zero-padded. pack() reuses its buffer, so packing per call (e.g. attention keys) does not allocate in steady state.
class PackedMatrix {
 public:
  // Element (r, c) of the source is data[r * row_stride + c * col_stride].
  void pack(const float* data, int k, int n, int64_t row_stride, int64_t col_stride, Kernel kernel = best_kernel());

  int k() const { return k_; }
  int n() const { return n_; }
  Kernel kernel() const { return kernel_; }
  int panel_width() const { return width_; }
  const float* panel(int index) const { return data_.data() + static_cast<int64_t>(index) * k_ * width_; }

 private:
  std::vector<float> data_;
  int k_ = 0;
  int n_ = 0;
  int width_ = 0;
  Kernel kernel_ = Kernel::kPortable;
};

struct Epilogue {
  const float* bias = nullptr;  // n values added to every row
  bool accumulate = false;      // add to C's current values instead of overwriting them
  bool relu = false;
};

// C (m x n, leading dimension ldc) = [C +] A (m x k, leading dimension lda) · B [+ bias], then max(0, .) if relu.
// Uses every OpenMP thread when called outside a parallel region on a product large enough to pay for it.
void multiply(const float* a, int m, int64_t lda, const PackedMatrix& b, float* c, int64_t ldc,
              const Epilogue& epilogue = {});

}  // namespace relmem::gemm
