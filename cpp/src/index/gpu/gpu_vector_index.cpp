#include "relmem/index/gpu/gpu_vector_index.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_set>

#include "relmem/common.hpp"

namespace relmem {
namespace {

// Rows are 32-bit inside the kernels' top-k keys.
constexpr int64_t kMaxRows = std::numeric_limits<int32_t>::max();

SearchResult empty_result(int64_t n_queries, int k) {
  SearchResult result;
  result.scores = RowMatrix::Constant(n_queries, k, -std::numeric_limits<float>::infinity());
  result.ids = IdMatrix::Constant(n_queries, k, -1);
  return result;
}

}  // namespace

GpuVectorIndex::GpuVectorIndex(int dim, Metric metric, gpu::Precision precision, int device)
    : GpuVectorIndex(dim, metric,
                     gpu::make_cuda_vector_store(dim, precision, metric == Metric::Cosine, device)) {}

GpuVectorIndex::GpuVectorIndex(int dim, Metric metric, std::unique_ptr<gpu::VectorStore> store)
    : dim_(dim), metric_(metric), store_(std::move(store)) {
  if (dim <= 0) throw Error("vector dimension must be positive, got " + std::to_string(dim));
  if (!store_ || store_->dim() != dim || store_->rows() != 0 ||
      store_->normalizes() != (metric == Metric::Cosine)) {
    throw Error("GpuVectorIndex needs an empty vector store of the same dimension and metric");
  }
}

void GpuVectorIndex::check_vectors(const float* vectors, int64_t n, const char* what) const {
  if (n < 0) throw Error(std::string("negative number of ") + what);
  if (n > 0 && !vectors) throw Error(std::string("null pointer for ") + what);
  const double limit = gpu::max_finite(store_->precision());
  for (int64_t i = 0; i < n; ++i) {
    double squared_norm = 0;
    for (int d = 0; d < dim_; ++d) {
      const float value = vectors[i * dim_ + d];
      if (!std::isfinite(value)) throw Error(std::string(what) + " contain a non-finite value");
      if (metric_ == Metric::InnerProduct && std::fabs(value) > limit) {
        throw Error(std::string(what) + " contain " + std::to_string(value) + ", beyond the range of " +
                    gpu::precision_name(store_->precision()));
      }
      squared_norm += static_cast<double>(value) * value;
    }
    if (metric_ == Metric::Cosine && squared_norm > std::numeric_limits<float>::max()) {
      throw Error(std::string(what) + " contain a vector whose squared norm overflows float");
    }
  }
}

void GpuVectorIndex::add(const float* vectors, int64_t n, const int64_t* ids) {
  check_vectors(vectors, n, "vectors");
  std::unique_lock lock(mutex_);
  if (static_cast<int64_t>(ids_.size()) + n > kMaxRows) {
    throw Error("GpuVectorIndex holds at most " + std::to_string(kMaxRows) + " vectors");
  }
  std::vector<int64_t> new_ids(n);
  if (ids) {
    std::unordered_set<int64_t> seen;
    for (int64_t i = 0; i < n; ++i) {
      if (ids[i] < 0) throw Error("ids must be non-negative, got " + std::to_string(ids[i]));
      if (row_of_id_.count(ids[i]) || !seen.insert(ids[i]).second) {
        throw Error("duplicate id " + std::to_string(ids[i]));
      }
      new_ids[i] = ids[i];
    }
  } else {
    for (int64_t i = 0; i < n; ++i) new_ids[i] = next_id_ + i;
  }
  store_->append(vectors, n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t previous = ids_.empty() ? -1 : ids_.back();
    ids_ascending_ = ids_ascending_ && new_ids[i] > previous;
    row_of_id_[new_ids[i]] = static_cast<int64_t>(ids_.size());
    ids_.push_back(new_ids[i]);
    next_id_ = std::max(next_id_, new_ids[i] + 1);
  }
}

int64_t GpuVectorIndex::remove(const std::vector<int64_t>& ids) {
  std::unique_lock lock(mutex_);
  std::vector<bool> removed(ids_.size(), false);
  int64_t count = 0;
  for (int64_t id : ids) {
    const auto found = row_of_id_.find(id);
    if (found == row_of_id_.end() || removed[found->second]) continue;
    removed[found->second] = true;
    ++count;
  }
  if (count == 0) return 0;
  std::vector<int64_t> kept_rows;
  std::vector<int64_t> kept_ids;
  for (size_t row = 0; row < ids_.size(); ++row) {
    if (removed[row]) continue;
    kept_rows.push_back(static_cast<int64_t>(row));
    kept_ids.push_back(ids_[row]);
  }
  store_->keep_rows(kept_rows);
  ids_ = std::move(kept_ids);
  row_of_id_.clear();
  for (size_t row = 0; row < ids_.size(); ++row) row_of_id_[ids_[row]] = static_cast<int64_t>(row);
  return count;
}

SearchResult GpuVectorIndex::search_rows(const float* queries, int64_t n_queries, int k,
                                         const gpu::RowSubset& subset) const {
  SearchResult result = empty_result(n_queries, k);
  if (n_queries == 0 || subset.end <= subset.begin) return result;
  IdMatrix rows(n_queries, k);
  store_->search(queries, n_queries, k, subset, algorithm_, result.scores.data(), rows.data());
  for (int64_t i = 0; i < rows.size(); ++i) {
    result.ids.data()[i] = rows.data()[i] < 0 ? -1 : ids_[rows.data()[i]];
  }
  return result;
}

SearchResult GpuVectorIndex::search(const float* queries, int64_t n_queries, int k) const {
  if (k <= 0) throw Error("k must be positive, got " + std::to_string(k));
  check_vectors(queries, n_queries, "queries");
  std::shared_lock lock(mutex_);
  return search_rows(queries, n_queries, k, {0, static_cast<int64_t>(ids_.size()), nullptr});
}

SearchResult GpuVectorIndex::search_range(const float* queries, int64_t n_queries, int k,
                                          int64_t id_begin, int64_t id_end) const {
  if (k <= 0) throw Error("k must be positive, got " + std::to_string(k));
  check_vectors(queries, n_queries, "queries");
  std::shared_lock lock(mutex_);
  if (ids_ascending_) {
    const auto first = std::lower_bound(ids_.begin(), ids_.end(), id_begin);
    const auto last = std::lower_bound(first, ids_.end(), std::max(id_begin, id_end));
    return search_rows(queries, n_queries, k, {first - ids_.begin(), last - ids_.begin(), nullptr});
  }
  std::vector<uint8_t> mask(ids_.size());
  for (size_t row = 0; row < ids_.size(); ++row) mask[row] = ids_[row] >= id_begin && ids_[row] < id_end;
  return search_rows(queries, n_queries, k, {0, static_cast<int64_t>(ids_.size()), mask.data()});
}

SearchResult GpuVectorIndex::search_subset(const float* queries, int64_t n_queries, int k,
                                           const std::vector<int64_t>& allowed_ids) const {
  if (k <= 0) throw Error("k must be positive, got " + std::to_string(k));
  check_vectors(queries, n_queries, "queries");
  std::shared_lock lock(mutex_);
  std::vector<uint8_t> mask(ids_.size(), 0);
  int64_t first = static_cast<int64_t>(ids_.size());
  int64_t last = 0;
  for (int64_t id : allowed_ids) {
    const auto found = row_of_id_.find(id);
    if (found == row_of_id_.end()) continue;
    mask[found->second] = 1;
    first = std::min(first, found->second);
    last = std::max(last, found->second + 1);
  }
  return search_rows(queries, n_queries, k, {first, last, mask.data()});
}

void GpuVectorIndex::save(const std::string& path) const {
  std::shared_lock lock(mutex_);
  VectorIndex cpu(dim_, metric_);
  constexpr int64_t kChunkRows = 65536;
  std::vector<float> chunk;
  for (int64_t begin = 0; begin < static_cast<int64_t>(ids_.size()); begin += kChunkRows) {
    const int64_t n = std::min<int64_t>(kChunkRows, static_cast<int64_t>(ids_.size()) - begin);
    chunk.resize(static_cast<size_t>(n) * dim_);
    store_->read_rows(begin, n, chunk.data());
    cpu.add(chunk.data(), n, ids_.data() + begin);
  }
  cpu.save(path);
}

std::unique_ptr<GpuVectorIndex> GpuVectorIndex::load(const std::string& path, gpu::Precision precision,
                                                     int device) {
  const VectorIndex cpu = VectorIndex::load(path);
  auto index = std::make_unique<GpuVectorIndex>(cpu.dim(), cpu.metric(), precision, device);
  const std::vector<int64_t> ids = cpu.ids();
  constexpr size_t kChunkRows = 65536;
  std::vector<float> chunk;
  for (size_t begin = 0; begin < ids.size(); begin += kChunkRows) {
    const size_t n = std::min(kChunkRows, ids.size() - begin);
    chunk.clear();
    for (size_t i = begin; i < begin + n; ++i) {
      const std::vector<float> vector = cpu.reconstruct(ids[i]);
      chunk.insert(chunk.end(), vector.begin(), vector.end());
    }
    index->add(chunk.data(), static_cast<int64_t>(n), ids.data() + begin);
  }
  return index;
}

int64_t GpuVectorIndex::size() const {
  std::shared_lock lock(mutex_);
  return static_cast<int64_t>(ids_.size());
}

bool GpuVectorIndex::contains(int64_t id) const {
  std::shared_lock lock(mutex_);
  return row_of_id_.count(id) > 0;
}

std::vector<int64_t> GpuVectorIndex::ids() const {
  std::shared_lock lock(mutex_);
  return ids_;
}

std::vector<float> GpuVectorIndex::reconstruct(int64_t id) const {
  std::shared_lock lock(mutex_);
  const auto found = row_of_id_.find(id);
  if (found == row_of_id_.end()) throw Error("id " + std::to_string(id) + " is not in the index");
  std::vector<float> vector(dim_);
  store_->read_rows(found->second, 1, vector.data());
  return vector;
}

}  // namespace relmem
