#pragma once
// 8-bit matrix products for the "use-lite-int8" encoder: activations quantized per row to u8 (asymmetric, with a
// zero point), weights per output column to s8 (symmetric), products accumulated exactly in int32 by AVX512-VNNI
// vpdpbusd, then scaled back to float. The kernel is compiled with a target attribute and only called on CPUs that
// report avx512_vnni (int8_available()); multiply_u8s8_reference is the plain C++ definition it must equal.
#include <cstdint>
#include <vector>

#include "packed_gemm.hpp"

namespace relmem::gemm {

// True when this CPU runs the VNNI kernel and RELMEM_GEMM_KERNEL does not force a non-AVX-512 kernel.
bool int8_available();

// B (k x n) as s8 for the VNNI kernel: panels of 32 columns, each k/4 steps of 32 columns x 4 consecutive k.
// k must be a multiple of 4.
class Int8Matrix {
 public:
  // Exact s8 values (row-major k x n); every column scale is 1.
  void pack(const int8_t* data, int k, int n);
  // Float weights (row-major k x n) rounded per column to s8 with scale max|column| / 127.
  void quantize(const float* data, int k, int n);

  int k() const { return k_; }
  int n() const { return n_; }
  const int8_t* panel(int index) const { return data_.data() + static_cast<int64_t>(index) * k_ * kPanelWidth; }
  const float* column_scales() const { return scales_.data(); }
  const int32_t* column_sums() const { return sums_.data(); }  // of the s8 values, for the activations' zero point

  static constexpr int kPanelWidth = 32;

 private:
  std::vector<int8_t> data_;
  std::vector<float> scales_;
  std::vector<int32_t> sums_;
  int k_ = 0;
  int n_ = 0;
};

// C (int32, m x n) = A (u8, m x k) · B exactly, with the VNNI kernel (int8_available() must hold).
void multiply_u8s8(const uint8_t* a, int m, int64_t lda, const Int8Matrix& b, int32_t* c, int64_t ldc);
// The same product from B's row-major s8 values with plain loops.
void multiply_u8s8_reference(const uint8_t* a, int m, int64_t lda, const int8_t* b, int k, int n, int32_t* c,
                             int64_t ldc);

// C (float) = [C +] quantize(A) · B, dequantized, [+ bias], [relu]: A's rows are quantized on the fly to u8 with
// scale (max - min) / 255 over the row's values and 0.
void multiply_quantized(const float* a, int m, int64_t lda, const Int8Matrix& b, float* c, int64_t ldc,
                        const Epilogue& epilogue = {});

}  // namespace relmem::gemm
