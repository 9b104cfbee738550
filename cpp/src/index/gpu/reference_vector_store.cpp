// The CPU reference VectorStore: what the CUDA store computes, in plain loops over rounded floats.
#include <algorithm>
#include <vector>

#include "relmem/common.hpp"
#include "relmem/index/gpu/reference_kernels.hpp"
#include "relmem/index/gpu/topk_keys.hpp"
#include "relmem/index/gpu/vector_store.hpp"

namespace relmem::gpu {
namespace {

class ReferenceVectorStore : public VectorStore {
 public:
  ReferenceVectorStore(int dim, Precision precision, bool normalize)
      : dim_(dim), precision_(precision), normalize_(normalize) {}

  int dim() const override { return dim_; }
  Precision precision() const override { return precision_; }
  bool normalizes() const override { return normalize_; }
  int64_t rows() const override { return static_cast<int64_t>(values_.size()) / dim_; }

  void append(const float* rows, int64_t n) override {
    const size_t old_size = values_.size();
    values_.resize(old_size + static_cast<size_t>(n) * dim_);
    normalize_convert_reference(rows, n, dim_, normalize_, precision_, values_.data() + old_size);
  }

  void keep_rows(const std::vector<int64_t>& rows) override {
    for (size_t i = 0; i < rows.size(); ++i) {
      std::copy_n(values_.begin() + rows[i] * dim_, dim_, values_.begin() + static_cast<int64_t>(i) * dim_);
    }
    values_.resize(rows.size() * dim_);
  }

  void read_rows(int64_t begin, int64_t n, float* out) const override {
    std::copy_n(values_.begin() + begin * dim_, n * dim_, out);
  }

  void search(const float* queries, int64_t n_queries, int k, const RowSubset& subset,
              SearchAlgorithm /*all algorithms compute the same top-k*/, float* out_scores,
              int64_t* out_rows) const override {
    std::vector<float> converted(static_cast<size_t>(n_queries) * dim_);
    normalize_convert_reference(queries, n_queries, dim_, normalize_, precision_, converted.data());
    std::vector<uint64_t> keys(static_cast<size_t>(n_queries) * k);
    fused_topk_reference(converted.data(), n_queries, values_.data(), dim_, subset.begin, subset.end,
                         subset.mask, k, keys.data());
    decode_topk_keys(keys.data(), static_cast<int64_t>(keys.size()), out_scores, out_rows);
  }

 private:
  int dim_;
  Precision precision_;
  bool normalize_;
  std::vector<float> values_;  // rows() * dim_, already rounded to precision_
};

}  // namespace

std::unique_ptr<VectorStore> make_reference_vector_store(int dim, Precision precision, bool normalize) {
  if (dim <= 0) throw Error("vector dimension must be positive, got " + std::to_string(dim));
  return std::make_unique<ReferenceVectorStore>(dim, precision, normalize);
}

}  // namespace relmem::gpu
