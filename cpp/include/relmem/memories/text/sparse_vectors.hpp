#pragma once
// Sparse rows keyed by int64 id, for lexical (hashing) embeddings: a card has ~1k non-zeros out of thousands of
// dimensions, so storing only those keeps a large collection's lexical vectors small. Dot products take a dense
// query. Saved as "RMSV" | u32 version | u32 dim | u64 rows | per row: i64 id, u32 nnz, (u32 index, f32 value)*nnz
// | u64 FNV-1a checksum.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace relmem {

class SparseVectors {
 public:
  explicit SparseVectors(int dim = 1);

  // Stores the non-zeros of a dense row of dim() floats, replacing any row with the same id.
  void add(int64_t id, const float* dense);
  bool remove(int64_t id);
  // Dot product of the row with a dense query of dim() floats; relmem::Error for an unknown id.
  float dot(int64_t id, const float* query) const;
  // The sum of the query's entries where the row is non-zero (the row's values ignored); relmem::Error for an
  // unknown id.
  float covered(int64_t id, const float* query) const;
  // |row ∘ weights| for weights of dim() floats.
  float weighted_norm(int64_t id, const std::vector<float>& weights) const;
  // Per dimension, how many rows have a non-zero there.
  const std::vector<int64_t>& document_frequency() const { return document_frequency_; }
  std::vector<int64_t> ids() const;

  bool contains(int64_t id) const { return rows_.count(id) > 0; }
  int64_t size() const { return static_cast<int64_t>(rows_.size()); }
  int dim() const { return dim_; }
  // Bytes of the stored non-zeros and ids.
  size_t memory_bytes() const;

  void save(const std::string& path) const;
  static SparseVectors load(const std::string& path);

 private:
  int dim_;
  std::vector<int64_t> document_frequency_;
  std::unordered_map<int64_t, std::vector<std::pair<uint32_t, float>>> rows_;
};

}  // namespace relmem
