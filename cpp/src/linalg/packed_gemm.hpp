#pragma once
// Single-precision matrix products C = A·B with B packed once (weights, or a batch of queries; as float or fp16) into
// column panels for an AVX-512 or AVX2+FMA+F16C micro-kernel chosen from the running CPU. The kernels are compiled per
// function with target attributes and picked at run time, so a portable build (RELMEM_NATIVE=OFF) keeps them; other
// CPUs use Eigen.
#include <cstdint>
#include <vector>

namespace relmem::gemm {

enum class Kernel { kAvx512, kAvx2, kPortable };

// The fastest kernel this CPU runs; RELMEM_GEMM_KERNEL=avx2|portable forces a slower one (for tests and comparisons).
Kernel best_kernel();
const char* kernel_name(Kernel kernel);

// How a packed B holds its values. kHalf (IEEE fp16, widened to float inside the kernel) halves the bytes a product
// streams, which is what bounds a product of a few rows by large weights; the portable kernel keeps floats.
enum class Storage { kFloat, kHalf };

// B (k x n) packed for one kernel: panels of panel_width() columns, each k rows of contiguous values, the last panel
// zero-padded. pack() reuses its buffer, so packing per call (e.g. attention keys) does not allocate in steady state.
class PackedMatrix {
 public:
  // Element (r, c) of the source is data[r * row_stride + c * col_stride]. With Storage::kHalf each value is rounded
  // to the nearest fp16 (on a kernel that reads fp16; the portable one stores floats).
  void pack(const float* data, int k, int n, int64_t row_stride, int64_t col_stride, Kernel kernel = best_kernel(),
            Storage storage = Storage::kFloat);

  int k() const { return k_; }
  int n() const { return n_; }
  Kernel kernel() const { return kernel_; }
  int panel_width() const { return width_; }
  Storage storage() const { return storage_; }
  const float* panel(int index) const { return data_.data() + static_cast<int64_t>(index) * k_ * width_; }
  const uint16_t* half_panel(int index) const { return halves_.data() + static_cast<int64_t>(index) * k_ * width_; }

 private:
  std::vector<float> data_;
  std::vector<uint16_t> halves_;
  int k_ = 0;
  int n_ = 0;
  int width_ = 0;
  Kernel kernel_ = Kernel::kPortable;
  Storage storage_ = Storage::kFloat;
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
