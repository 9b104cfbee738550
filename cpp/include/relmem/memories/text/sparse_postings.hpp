#pragma once
// Sparse rows turned around: per dimension, the rows with a non-zero there and its value. A question's lexical
// vector has about a hundred non-zeros among 4,096 dimensions and a database card about 1,200, so reading the rows
// through the question's dimensions touches a small share of the entries that a pass over every row reads. Built
// for a collection whose every row is scored for each question (SelectionMemory below its pool).
#include <cstdint>
#include <utility>
#include <vector>

#include "relmem/memories/text/sparse_vectors.hpp"

namespace relmem {

class SparsePostings {
 public:
  // One slot per (vectors, id), in that order; `weights` (dim() floats) give each row's weighted norm, kept here.
  SparsePostings(int dim, const std::vector<std::pair<const SparseVectors*, int64_t>>& rows,
                 const std::vector<float>& weights);

  // Per slot, what SparseVectors::pass gives for that row (the same sums, added in another order), the covered
  // mass always included: `query` and `mass` are dense, dim() floats each.
  std::vector<SparseVectors::RowPass> passes(const float* query, const float* mass) const;

  int64_t slots() const { return static_cast<int64_t>(norms_.size()); }
  size_t memory_bytes() const;

 private:
  std::vector<uint32_t> offsets_;  // dimension j's postings are offsets_[j] .. offsets_[j + 1] - 1 (dim + 1 of them)
  std::vector<uint32_t> slots_;
  std::vector<float> values_;
  std::vector<float> norms_;  // |row ∘ weights| per slot
};

}  // namespace relmem
