#pragma once
// 8-bit matrix products for the "use-lite-int8" encoder and the int8 vector index's large batches: activations (or
// queries) quantized per row to u8 (asymmetric, with a zero point), weights per output column (or stored int8 rows)
// as s8 (symmetric), products accumulated exactly in int32 by AVX512-VNNI vpdpbusd, then scaled back to float. The
// kernel is compiled with a target attribute and only called on CPUs that report avx512_vnni (int8_available());
// multiply_u8s8_reference is the plain C++ definition it must equal.
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
  // B given column by column, already s8 with its column scales: column j is the k values at columns + j * stride
  // (e.g. a block of an int8 vector store's rows). Any k: the packed k() rounds it up to a multiple of 4 with zeros.
  // Reuses its buffers, so packing a block per call does not allocate in steady state.
  void pack_columns(const int8_t* columns, int64_t stride, int n, int k, const float* scales);

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

// A (m x k) as u8 rows laid out for the kernel (tiles of rows, 4 consecutive k per group), each row with its scale
// and zero point: value = (u8 - zero point) * scale.
class Int8Rows {
 public:
  // Exact u8 values (row stride lda); scale 1, zero point 0. k must be a multiple of 4.
  void pack(const uint8_t* a, int m, int64_t lda, int k);
  // Float rows quantized to u8 with scale (max - min) / 255 over the row's values and 0, and the zero point that
  // maps 0 to an integer. Any k: k() rounds it up to a multiple of 4, the padding holding the zero point. Needs
  // int8_available().
  void quantize(const float* a, int m, int64_t lda, int k);

  int m() const { return m_; }
  int k() const { return k_; }
  uint8_t value(int row, int col) const;
  float scale(int row) const { return scales_[static_cast<std::size_t>(row)]; }
  int32_t zero_point(int row) const { return zero_points_[static_cast<std::size_t>(row)]; }

  // Internal layout, for the kernel.
  const uint8_t* tiles(int first_row) const { return tiles_.data() + static_cast<int64_t>(first_row) * k_; }
  const float* scales(int first_row) const { return scales_.data() + first_row; }
  const int32_t* zero_points(int first_row) const { return zero_points_.data() + first_row; }

 private:
  std::vector<uint8_t> tiles_;
  std::vector<float> scales_;
  std::vector<int32_t> zero_points_;
  int m_ = 0;
  int k_ = 0;
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
// C (float, m x n) = A · B dequantized, for A quantized once and multiplied by many B (a batch of queries against
// blocks of stored rows). Runs on the calling thread only: its callers share the work out among their threads.
void multiply_quantized(const Int8Rows& a, const Int8Matrix& b, float* c, int64_t ldc);

}  // namespace relmem::gemm
