#pragma once
// Exact vector index on a CUDA device (the gpu/ mirror of relmem::VectorIndex, as in FAISS):
// vectors live on the device in fp32, fp16 or bf16 (normalized once, for cosine), queries are
// converted the same way and searched with the kernels in kernels/. Same interface and results as
// VectorIndex up to the storage precision; ties between equal scores rank the lower row first.
#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "relmem/device/precision.hpp"
#include "relmem/index/gpu/vector_store.hpp"
#include "relmem/index/vector_index.hpp"

namespace relmem {

class GpuVectorIndex {
 public:
  // Throws relmem::Error when relmem was built without CUDA or `device` is not a usable CUDA device.
  GpuVectorIndex(int dim, Metric metric = Metric::Cosine, gpu::Precision precision = gpu::Precision::FP16,
                 int device = 0);
  // The same index over any store; tests use gpu::make_reference_vector_store (the CPU reference).
  GpuVectorIndex(int dim, Metric metric, std::unique_ptr<gpu::VectorStore> store);

  // Adds n rows of `dim` floats. ids == nullptr assigns consecutive ids after the largest id so far.
  // Ids must be unique and non-negative; values finite and representable in the storage precision.
  void add(const float* vectors, int64_t n, const int64_t* ids = nullptr);
  // Removes the given ids; returns how many were present.
  int64_t remove(const std::vector<int64_t>& ids);

  // Top-k for every query row (k <= 1024 unless the algorithm is GemmSort, or Auto: see kFusedMaxQueries); safe to
  // call from several threads at once (device work is serialized).
  SearchResult search(const float* queries, int64_t n_queries, int k) const;
  // Same, restricted to rows whose id lies in [id_begin, id_end).
  SearchResult search_range(const float* queries, int64_t n_queries, int k, int64_t id_begin,
                            int64_t id_end) const;
  // Same, restricted to the given ids (ids not in the index are ignored).
  SearchResult search_subset(const float* queries, int64_t n_queries, int k,
                             const std::vector<int64_t>& allowed_ids) const;

  // Saved in VectorIndex's file format (vectors as stored, widened to fp32; VectorIndex re-normalizes
  // them for cosine, which moves them by at most a few ulps of the storage precision), so either
  // class loads the file.
  void save(const std::string& path) const;
  static std::unique_ptr<GpuVectorIndex> load(const std::string& path,
                                              gpu::Precision precision = gpu::Precision::FP16,
                                              int device = 0);

  int dim() const { return dim_; }
  Metric metric() const { return metric_; }
  gpu::Precision precision() const { return store_->precision(); }
  int64_t size() const;
  bool contains(int64_t id) const;
  std::vector<int64_t> ids() const;
  // The stored (normalized, for cosine, and rounded to the storage precision) vector of an id.
  std::vector<float> reconstruct(int64_t id) const;

  // Which kernels search uses (benchmarks compare them); Auto by default.
  void set_search_algorithm(gpu::SearchAlgorithm algorithm) { algorithm_ = algorithm; }
  gpu::SearchAlgorithm search_algorithm() const { return algorithm_; }

 private:
  SearchResult search_rows(const float* queries, int64_t n_queries, int k,
                           const gpu::RowSubset& subset) const;
  void check_vectors(const float* vectors, int64_t n, const char* what) const;

  int dim_;
  Metric metric_;
  std::unique_ptr<gpu::VectorStore> store_;
  std::vector<int64_t> ids_;  // id of each stored row
  std::unordered_map<int64_t, int64_t> row_of_id_;
  int64_t next_id_ = 0;
  bool ids_ascending_ = true;  // lets search_range use a row range instead of a mask
  std::atomic<gpu::SearchAlgorithm> algorithm_{gpu::SearchAlgorithm::Auto};
  mutable std::shared_mutex mutex_;
};

}  // namespace relmem
