#pragma once
// Exact (brute-force) vector index: float32 vectors with int64 ids, cosine or inner product,
// batched top-k on an Eigen GEMM followed by a partial selection per query.
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

enum class Metric { Cosine, InnerProduct };

Metric parse_metric(const std::string& name);
std::string metric_name(Metric metric);

struct SearchResult {
  RowMatrix scores;  // (queries, k), best first; padded with -inf where fewer than k vectors exist
  IdMatrix ids;      // (queries, k); -1 for padding
};

class VectorIndex {
 public:
  VectorIndex(int dim, Metric metric = Metric::Cosine);
  VectorIndex(VectorIndex&& other) noexcept;
  VectorIndex& operator=(VectorIndex&& other) noexcept;

  // Adds n rows of `dim` floats. ids == nullptr assigns consecutive ids after the largest id so far.
  // Ids must be unique within the index.
  void add(const float* vectors, int64_t n, const int64_t* ids = nullptr);
  // Removes the given ids; returns how many were present.
  int64_t remove(const std::vector<int64_t>& ids);

  // Top-k for every query row; safe to call from several threads at once.
  SearchResult search(const float* queries, int64_t n_queries, int k) const;
  // Same, restricted to rows whose id lies in [id_begin, id_end).
  SearchResult search_range(const float* queries, int64_t n_queries, int k, int64_t id_begin,
                            int64_t id_end) const;

  void save(const std::string& path) const;
  static VectorIndex load(const std::string& path);

  int dim() const { return dim_; }
  Metric metric() const { return metric_; }
  int64_t size() const;
  bool contains(int64_t id) const;
  std::vector<int64_t> ids() const;
  // The stored (normalized, for cosine) vector of an id.
  std::vector<float> reconstruct(int64_t id) const;

 private:
  SearchResult search_rows(const float* queries, int64_t n_queries, int k, int64_t row_begin,
                           int64_t row_end, const std::vector<int64_t>* row_filter) const;

  int dim_;
  Metric metric_;
  RowMatrix vectors_;  // (capacity, dim); first ids_.size() rows are live
  std::vector<int64_t> ids_;
  std::unordered_map<int64_t, int64_t> row_of_id_;
  int64_t next_id_ = 0;
  mutable std::shared_mutex mutex_;
};

}  // namespace relmem
