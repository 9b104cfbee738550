#include "relmem/index/vector_index.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

#include "../linalg/packed_gemm.hpp"
#include "relmem/index/device_placement.hpp"
#include "relmem/index/gpu/gpu_vector_index.hpp"
#include "relmem/index/topk.hpp"

namespace relmem {
namespace {

// Rows scored per GEMM: bounds the temporary score block to about 64 MiB whatever the collection size.
int64_t block_rows(int64_t n_queries) {
  return std::max<int64_t>(1024, (int64_t{16} << 20) / std::max<int64_t>(1, n_queries));
}

constexpr int64_t kPackedMinQueries = 16;

// Rows per packed product: a score block of about 2 MiB, which the per-query scan reads column by column.
int64_t packed_block_rows(int64_t n_queries) {
  return std::max<int64_t>(256, (int64_t{512} << 10) / n_queries);
}

void normalize_rows(RowMatrix& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const float norm = m.row(i).norm();
    if (norm > 0) m.row(i) /= norm;
  }
}

}  // namespace

Metric parse_metric(const std::string& name) {
  if (name == "cosine") return Metric::Cosine;
  if (name == "ip" || name == "inner_product" || name == "dot") return Metric::InnerProduct;
  throw Error("unknown metric '" + name + "' (use 'cosine' or 'ip')");
}

std::string metric_name(Metric metric) { return metric == Metric::Cosine ? "cosine" : "ip"; }

VectorIndex::VectorIndex(int dim, Metric metric, const std::string& device, const std::string& dtype)
    : dim_(dim), metric_(metric) {
  if (dim <= 0) throw Error("vector dimension must be positive, got " + std::to_string(dim));
  const DevicePlacement placement = resolve_device_placement(device, dtype);
  precision_ = placement.precision;
  cuda_device_ = placement.cuda_device;
  if (cuda_device_ >= 0) gpu_ = std::make_unique<GpuVectorIndex>(dim, metric, precision_, cuda_device_);
}

VectorIndex::VectorIndex(std::unique_ptr<GpuVectorIndex> gpu, int cuda_device)
    : dim_(gpu->dim()), metric_(gpu->metric()), precision_(gpu->precision()), cuda_device_(cuda_device),
      gpu_(std::move(gpu)) {}

VectorIndex::VectorIndex(VectorIndex&& other) noexcept : dim_(other.dim_), metric_(other.metric_) {
  *this = std::move(other);
}

VectorIndex::~VectorIndex() = default;

VectorIndex& VectorIndex::operator=(VectorIndex&& other) noexcept {
  if (this == &other) return *this;
  std::unique_lock mine(mutex_, std::defer_lock);
  std::unique_lock theirs(other.mutex_, std::defer_lock);
  std::lock(mine, theirs);
  dim_ = other.dim_;
  metric_ = other.metric_;
  vectors_ = std::move(other.vectors_);
  ids_ = std::move(other.ids_);
  row_of_id_ = std::move(other.row_of_id_);
  next_id_ = other.next_id_;
  precision_ = other.precision_;
  cuda_device_ = other.cuda_device_;
  gpu_ = std::move(other.gpu_);
  return *this;
}

std::string VectorIndex::device() const {
  return cuda_device_ < 0 ? "cpu" : "cuda:" + std::to_string(cuda_device_);
}

void VectorIndex::add(const float* vectors, int64_t n, const int64_t* ids) {
  if (gpu_) return gpu_->add(vectors, n, ids);
  if (n < 0) throw Error("negative number of vectors");
  if (n == 0) return;
  std::unique_lock lock(mutex_);
  std::vector<int64_t> new_ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    new_ids[i] = ids ? ids[i] : next_id_ + i;
    if (new_ids[i] < 0) throw Error("ids must be non-negative, got " + std::to_string(new_ids[i]));
    if (row_of_id_.count(new_ids[i])) throw Error("id " + std::to_string(new_ids[i]) + " is already in the index");
  }
  std::vector<int64_t> sorted = new_ids;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) throw Error("duplicate ids in one add()");

  RowMatrix block = Eigen::Map<const RowMatrix>(vectors, n, dim_);
  if (!block.allFinite()) throw Error("vectors contain NaN or infinity");
  if (metric_ == Metric::Cosine) normalize_rows(block);

  const int64_t live = static_cast<int64_t>(ids_.size());
  if (live + n > vectors_.rows()) vectors_.conservativeResize(std::max(live + n, 2 * vectors_.rows()), dim_);
  vectors_.middleRows(live, n) = block;
  for (int64_t i = 0; i < n; ++i) {
    row_of_id_[new_ids[i]] = live + i;
    ids_.push_back(new_ids[i]);
    next_id_ = std::max(next_id_, new_ids[i] + 1);
  }
}

int64_t VectorIndex::remove(const std::vector<int64_t>& ids) {
  if (gpu_) return gpu_->remove(ids);
  std::unique_lock lock(mutex_);
  int64_t removed = 0;
  for (int64_t id : ids) {
    auto it = row_of_id_.find(id);
    if (it == row_of_id_.end()) continue;
    const int64_t row = it->second;
    const int64_t last = static_cast<int64_t>(ids_.size()) - 1;
    if (row != last) {
      vectors_.row(row) = vectors_.row(last);
      ids_[row] = ids_[last];
      row_of_id_[ids_[row]] = row;
    }
    ids_.pop_back();
    row_of_id_.erase(it);
    ++removed;
  }
  return removed;
}

SearchResult VectorIndex::search(const float* queries, int64_t n_queries, int k) const {
  if (gpu_) return gpu_->search(queries, n_queries, k);
  std::shared_lock lock(mutex_);
  return search_rows(queries, n_queries, k, 0, static_cast<int64_t>(ids_.size()), nullptr);
}

SearchResult VectorIndex::search_range(const float* queries, int64_t n_queries, int k, int64_t id_begin,
                                       int64_t id_end) const {
  if (gpu_) return gpu_->search_range(queries, n_queries, k, id_begin, id_end);
  std::shared_lock lock(mutex_);
  std::vector<int64_t> rows;
  for (int64_t row = 0; row < static_cast<int64_t>(ids_.size()); ++row)
    if (ids_[row] >= id_begin && ids_[row] < id_end) rows.push_back(row);
  return search_rows(queries, n_queries, k, 0, static_cast<int64_t>(rows.size()), &rows);
}

// Scores [row_begin, row_end) block by block with one GEMM each, then keeps a running top-k per query.
// With row_filter, positions index into it instead of directly into the stored rows.
SearchResult VectorIndex::search_rows(const float* queries, int64_t n_queries, int k, int64_t row_begin,
                                      int64_t row_end, const std::vector<int64_t>* row_filter) const {
  if (k <= 0) throw Error("k must be positive, got " + std::to_string(k));
  if (n_queries < 0) throw Error("negative number of queries");
  RowMatrix q = Eigen::Map<const RowMatrix>(queries, n_queries, dim_);
  if (!q.allFinite()) throw Error("queries contain NaN or infinity");
  if (metric_ == Metric::Cosine) normalize_rows(q);

  std::vector<std::vector<Scored>> best(static_cast<size_t>(n_queries));
  // From kPackedMinQueries queries on, the packed micro-kernel (queries packed once as B) outruns Eigen's product.
  // Its scores come out rows x queries, so its blocks stay small enough for the per-query strided scan to hit cache.
  const bool packed = n_queries >= kPackedMinQueries;
  gemm::PackedMatrix packed_queries;
  if (packed) packed_queries.pack(q.data(), dim_, static_cast<int>(n_queries), 1, dim_);
  const int64_t step = packed ? packed_block_rows(n_queries) : block_rows(n_queries);
  RowMatrix gathered;
  RowMatrix scores;
  for (int64_t begin = row_begin; begin < row_end; begin += step) {
    const int64_t count = std::min(step, row_end - begin);
    const float* rows = vectors_.data() + begin * dim_;
    if (row_filter) {
      gathered.resize(count, dim_);
      for (int64_t i = 0; i < count; ++i) gathered.row(i) = vectors_.row((*row_filter)[begin + i]);
      rows = gathered.data();
    }
    if (packed) {
      scores.resize(count, n_queries);
      gemm::multiply(rows, static_cast<int>(count), dim_, packed_queries, scores.data(), n_queries);
    } else {
      scores.noalias() = q * Eigen::Map<const RowMatrix>(rows, count, dim_).transpose();
    }
    const int64_t qs = packed ? 1 : count;  // element (query, row) at query * qs + row * rs
    const int64_t rs = packed ? n_queries : 1;
#pragma omp parallel for schedule(static)
    for (int64_t qi = 0; qi < n_queries; ++qi) {
      auto& kept = best[qi];
      const float* column = scores.data() + qi * qs;
      const float floor =
          static_cast<int64_t>(kept.size()) >= k ? kept.back().score : -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < count; ++i) {
        const float score = column[i * rs];
        if (score < floor) continue;
        const int64_t stored_row = row_filter ? (*row_filter)[begin + i] : begin + i;
        kept.push_back({score, ids_[stored_row]});
      }
      keep_top_k(kept, static_cast<size_t>(k));
    }
  }

  SearchResult result;
  result.scores = RowMatrix::Constant(n_queries, k, -std::numeric_limits<float>::infinity());
  result.ids = IdMatrix::Constant(n_queries, k, -1);
  for (int64_t qi = 0; qi < n_queries; ++qi)
    for (size_t j = 0; j < best[qi].size(); ++j) {
      result.scores(qi, j) = best[qi][j].score;
      result.ids(qi, j) = best[qi][j].id;
    }
  return result;
}

int64_t VectorIndex::size() const {
  if (gpu_) return gpu_->size();
  std::shared_lock lock(mutex_);
  return static_cast<int64_t>(ids_.size());
}

bool VectorIndex::contains(int64_t id) const {
  if (gpu_) return gpu_->contains(id);
  std::shared_lock lock(mutex_);
  return row_of_id_.count(id) > 0;
}

std::vector<int64_t> VectorIndex::ids() const {
  if (gpu_) return gpu_->ids();
  std::shared_lock lock(mutex_);
  return ids_;
}

std::vector<float> VectorIndex::reconstruct(int64_t id) const {
  if (gpu_) return gpu_->reconstruct(id);
  std::shared_lock lock(mutex_);
  auto it = row_of_id_.find(id);
  if (it == row_of_id_.end()) throw Error("id " + std::to_string(id) + " is not in the index");
  const auto row = vectors_.row(it->second);
  return std::vector<float>(row.data(), row.data() + dim_);
}

void VectorIndex::inner_products(const float* query, const int64_t* ids, int64_t n, float* out) const {
  if (n < 0) throw Error("negative number of ids");
  if (gpu_) {
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<float> row = gpu_->reconstruct(ids[i]);
      out[i] = Eigen::Map<const Eigen::RowVectorXf>(row.data(), dim_).dot(Eigen::Map<const Eigen::RowVectorXf>(query, dim_));
    }
    return;
  }
  std::shared_lock lock(mutex_);
  const Eigen::Map<const Eigen::RowVectorXf> q(query, dim_);
  for (int64_t i = 0; i < n; ++i) {
    auto it = row_of_id_.find(ids[i]);
    if (it == row_of_id_.end()) throw Error("id " + std::to_string(ids[i]) + " is not in the index");
    out[i] = vectors_.row(it->second).dot(q);
  }
}

}  // namespace relmem
