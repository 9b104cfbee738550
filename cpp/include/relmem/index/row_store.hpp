#pragma once
// The rows of a CPU VectorIndex in one of three storage types, with fp32 accumulation whatever the type:
//   fp32: the floats as given;
//   fp16: IEEE half precision (round to nearest even), half the bytes;
//   int8: each row scaled so that its largest |value| maps to 127 and rounded, with one float scale per row
//         (value ≈ code × scale), a quarter of the bytes.
// The rows are either owned or a read-only view into a memory-mapped file, which is copied into owned memory the
// first time the rows change.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace relmem {

// Allocates on 64-byte boundaries, so that rows of a multiple of 64 bytes never straddle cache lines (a split load
// costs a second cache-line access; a scan at memory speed slows measurably).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

enum class RowType : uint32_t { FP32 = 0, FP16 = 1, INT8 = 2 };

// "fp32", "fp16" or "int8"; anything else is a relmem::Error.
RowType parse_row_type(const std::string& name);
std::string row_type_name(RowType type);
size_t bytes_per_value(RowType type);

// What the scan kernels read: `rows` rows of `dim` values, row r at codes + r * dim * bytes_per_value(type);
// scales (int8 only) holds one float per row.
struct RowsView {
  RowType type = RowType::FP32;
  int dim = 0;
  int64_t rows = 0;
  const uint8_t* codes = nullptr;
  const float* scales = nullptr;

  size_t row_bytes() const { return static_cast<size_t>(dim) * bytes_per_value(type); }
  const uint8_t* row(int64_t r) const { return codes + static_cast<size_t>(r) * row_bytes(); }
  // Row r widened to dim floats.
  void decode(int64_t r, float* out) const;
  // Inner product of row r with dim floats, accumulated in fp32.
  float dot(int64_t r, const float* query) const;
};

class RowStore {
 public:
  RowStore(int dim, RowType type);

  // Encodes and appends n rows of dim (finite) floats.
  void append(const float* rows, int64_t n);
  // Overwrites row `to` with row `from` (for swap-removal), and drops the last row.
  void copy_row(int64_t from, int64_t to);
  void pop_back();
  // Shows `rows` rows stored elsewhere (a mapped file that `keep_alive` keeps open) instead of owning them.
  void attach(std::shared_ptr<const void> keep_alive, const uint8_t* codes, const float* scales, int64_t rows);
  // Takes ownership of already encoded rows (as a file holds them).
  void assign(AlignedBytes codes, std::vector<float> scales, int64_t rows);

  RowsView view() const { return {type_, dim_, rows_, codes_, scales_}; }
  RowType type() const { return type_; }
  int64_t rows() const { return rows_; }
  bool mapped() const { return mapping_ != nullptr; }
  // Bytes of rows held in this process's own memory (a mapped store holds none).
  size_t owned_bytes() const { return owned_codes_.capacity() + owned_scales_.capacity() * sizeof(float); }
  size_t code_bytes() const { return static_cast<size_t>(rows_) * view().row_bytes(); }

 private:
  void own();  // copies mapped rows into owned memory
  void point_at_owned();

  int dim_;
  RowType type_;
  int64_t rows_ = 0;
  AlignedBytes owned_codes_;
  std::vector<float> owned_scales_;
  const uint8_t* codes_ = nullptr;
  const float* scales_ = nullptr;
  std::shared_ptr<const void> mapping_;
};

}  // namespace relmem
