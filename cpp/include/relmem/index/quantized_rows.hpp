#pragma once
// Int8 copies of float rows, for a fast approximate first pass over many rows before an exact re-ranking: each row
// is scaled so that its largest |value| maps to 127 and rounded, a quarter of the float32 bytes to stream. A query
// is rounded to int16 the same way; the integer dot products are exact, so every CPU kernel (AVX-512, AVX2,
// portable) returns the same scores and rankings are deterministic.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace relmem {

class QuantizedRows {
 public:
  explicit QuantizedRows(int dim);

  // Stores a row of dim() floats (finite), replacing any row with the same id.
  void add(int64_t id, const float* row);
  bool remove(int64_t id);

  // The ids of the (at most) n rows with the largest approximate inner product with the query, best first; ties go
  // to the smaller id.
  std::vector<int64_t> top(const float* query, int n) const;
  // Approximate inner product of the query with one stored row (relmem::Error for an unknown id).
  float inner_product(int64_t id, const float* query) const;

  int dim() const { return dim_; }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  // Bytes of the codes, scales and ids.
  size_t memory_bytes() const { return codes_.size() + (sizeof(float) + 2 * sizeof(int64_t)) * ids_.size(); }

 private:
  struct Query {
    std::vector<int16_t> codes;  // stride_ values, zero-padded
    float scale = 0.0f;          // value = code * scale
  };
  Query quantize(const float* query) const;

  int dim_;
  int stride_;                  // dim_ rounded up to a multiple of 32 (zero-padded codes)
  std::vector<int8_t> codes_;   // rows x stride_
  std::vector<float> scales_;   // per row: value = code * scale
  std::vector<int64_t> ids_;
  std::unordered_map<int64_t, int64_t> row_of_id_;
};

}  // namespace relmem
