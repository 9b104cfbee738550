#pragma once
// Exact (brute-force) vector index: float32 vectors with int64 ids, cosine or inner product,
// batched top-k on an Eigen GEMM followed by a partial selection per query. With device "cuda" (or
// "cuda:N") every operation is forwarded to a GpuVectorIndex storing fp32, fp16 or bf16 on the GPU.
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "relmem/common.hpp"
#include "relmem/index/gpu/precision.hpp"

namespace relmem {

class GpuVectorIndex;

enum class Metric { Cosine, InnerProduct };

Metric parse_metric(const std::string& name);
std::string metric_name(Metric metric);

struct SearchResult {
  RowMatrix scores;  // (queries, k), best first; padded with -inf where fewer than k vectors exist
  IdMatrix ids;      // (queries, k); -1 for padding
};

class VectorIndex {
 public:
  // device: "cpu", "cuda" or "cuda:N"; dtype: "fp32", or "fp16" / "bf16" on cuda. Throws relmem::Error
  // for an unknown device or dtype, a non-fp32 dtype on cpu, and on cuda when relmem was built without
  // CUDA or the device is not usable.
  VectorIndex(int dim, Metric metric = Metric::Cosine, const std::string& device = "cpu",
              const std::string& dtype = "fp32");
  VectorIndex(VectorIndex&& other) noexcept;
  VectorIndex& operator=(VectorIndex&& other) noexcept;
  ~VectorIndex();

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

  // The file format is the same for every device and dtype (vectors widened to fp32).
  void save(const std::string& path) const;
  static VectorIndex load(const std::string& path, const std::string& device = "cpu",
                          const std::string& dtype = "fp32");

  int dim() const { return dim_; }
  Metric metric() const { return metric_; }
  // "cpu" or "cuda:N".
  std::string device() const;
  gpu::Precision precision() const { return precision_; }
  int64_t size() const;
  bool contains(int64_t id) const;
  std::vector<int64_t> ids() const;
  // The stored (normalized, for cosine) vector of an id.
  std::vector<float> reconstruct(int64_t id) const;
  // Exact inner products of one query (dim() floats, used as given) with the stored rows of n ids, into out[0..n);
  // relmem::Error for an unknown id. Scores a few chosen rows without copying them out.
  void inner_products(const float* query, const int64_t* ids, int64_t n, float* out) const;

 private:
  VectorIndex(std::unique_ptr<GpuVectorIndex> gpu, int cuda_device);
  SearchResult search_rows(const float* queries, int64_t n_queries, int k, int64_t row_begin,
                           int64_t row_end, const std::vector<int64_t>* row_filter) const;

  int dim_;
  Metric metric_;
  RowMatrix vectors_;  // (capacity, dim); first ids_.size() rows are live
  std::vector<int64_t> ids_;
  std::unordered_map<int64_t, int64_t> row_of_id_;
  int64_t next_id_ = 0;
  mutable std::shared_mutex mutex_;
  gpu::Precision precision_ = gpu::Precision::FP32;
  int cuda_device_ = -1;                // -1 on cpu
  std::unique_ptr<GpuVectorIndex> gpu_;  // set on cuda: everything is forwarded to it
};

}  // namespace relmem
