#pragma once
// Row storage and exact top-k search behind GpuVectorIndex. Rows are addressed by position; ids are
// GpuVectorIndex's business. Two implementations: the CUDA store (kernels/, linked only when relmem is
// built with CUDA) and the plain-loop CPU reference store that mirrors it bit for bit where it can.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "relmem/device/precision.hpp"

namespace relmem::gpu {

// How a search is carried out on the device. Auto picks Fused for small batches and GemmSelect beyond.
enum class SearchAlgorithm {
  Auto,
  Fused,        // one pass over the stored vectors, per-query top-k kept on chip (tensor cores for fp16/bf16)
  FusedSimt,    // the same with CUDA-core dot products for every precision
  GemmSelect,   // cuBLAS GEMM into score tiles, then top-k selection of each tile
  GemmSort,     // baseline: cuBLAS GEMM of the whole score matrix, CUB segmented sort, first k
};

SearchAlgorithm parse_search_algorithm(const std::string& name);
std::string search_algorithm_name(SearchAlgorithm algorithm);

// Largest k the selection kernels support (GemmSort has no limit).
constexpr int kMaxSelectK = 1024;
// Auto uses GemmSort for k > kMaxSelectK (unless the search is masked: then k > kMaxSelectK is an error), else the
// fused kernel up to kFusedMaxQueries queries, or up to kStreamFusedMaxQueries where it streams (fp16/bf16 rows,
// k <= 16).
constexpr int kFusedMaxQueries = 8;  // from `relmem bench similarity` on an H100: the GEMM path wins from 64 queries
constexpr int kStreamFusedMaxQueries = 64;  // H200, 64 queries: streaming 0.82 ms, the GEMM path 1.45 ms

// Rows [begin, end) of the store; when mask is set, only rows r with mask[r] != 0 (mask has one byte
// per stored row, indexed by absolute row).
struct RowSubset {
  int64_t begin = 0;
  int64_t end = 0;
  const uint8_t* mask = nullptr;
};

class VectorStore {
 public:
  virtual ~VectorStore() = default;

  virtual int dim() const = 0;
  virtual Precision precision() const = 0;
  virtual bool normalizes() const = 0;
  virtual int64_t rows() const = 0;

  // Appends n rows of dim() floats: normalized to unit length first when normalizes(), then
  // converted to precision(). Rows must be finite and representable in precision().
  virtual void append(const float* rows, int64_t n) = 0;
  // Keeps only the listed rows (strictly increasing), in that order.
  virtual void keep_rows(const std::vector<int64_t>& rows) = 0;
  // Copies rows [begin, begin + n) back as floats into out (n * dim()).
  virtual void read_rows(int64_t begin, int64_t n, float* out) const = 0;

  // Top-k by score = <normalized query converted to precision(), stored row>, best first, over the
  // rows in `subset`. out_rows gets the row position (-1 for padding where fewer than k rows qualify,
  // with score -inf). Ties rank the lower row first. Outputs hold n_queries * k entries.
  virtual void search(const float* queries, int64_t n_queries, int k, const RowSubset& subset,
                      SearchAlgorithm algorithm, float* out_scores, int64_t* out_rows) const = 0;
};

// Plain-loop CPU implementation (the reference the CUDA store is tested against).
std::unique_ptr<VectorStore> make_reference_vector_store(int dim, Precision precision, bool normalize);

// CUDA implementation on device `device`. Throws relmem::Error when relmem was built without CUDA,
// when no CUDA device is usable, or when `device` does not exist.
std::unique_ptr<VectorStore> make_cuda_vector_store(int dim, Precision precision, bool normalize,
                                                    int device);

}  // namespace relmem::gpu
