#include "relmem/index/vector_index.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>

#include "../common/mapped_file.hpp"
#include "../linalg/int8_gemm.hpp"
#include "../linalg/packed_gemm.hpp"
#include "relmem/index/device_placement.hpp"
#include "relmem/index/gpu/gpu_vector_index.hpp"
#include "scan_kernels.hpp"
#include "shared_chunks.hpp"

namespace relmem {
namespace {

constexpr float kNoScore = -std::numeric_limits<float>::infinity();

// Rows scored per GEMM: bounds the temporary score block to about 64 MiB whatever the collection size.
int64_t block_rows(int64_t n_queries) {
  return std::max<int64_t>(1024, (int64_t{16} << 20) / std::max<int64_t>(1, n_queries));
}

constexpr int64_t kPackedMinQueries = 16;
// Listed rows widened and packed per block of this many (128 x 512 fp32: 256 kB, within L2) for several queries.
constexpr int64_t kListedBlockRows = 128;

// Rows per packed product: a score block of about 2 MiB, which the per-query scan reads column by column.
int64_t packed_block_rows(int64_t n_queries) {
  return std::max<int64_t>(256, (int64_t{512} << 10) / n_queries);
}

// Rows per scan step: their scores for a whole batch stay in L1/L2 while the candidates are picked.
constexpr int64_t kScanBlock = 256;
// Blocks a thread takes at a time: long runs of rows for the prefetcher, short enough to share the work out.
constexpr int kScanChunkBlocks = 8;
// Below this many rows the scan runs on one thread.
constexpr int64_t kScanParallelRows = 16384;

// Re-ranking shares its queries out among the threads from this many candidate rows on, a few queries at a time.
constexpr int64_t kRerankParallelRows = 2048;
constexpr int64_t kRerankChunkQueries = 4;

// Rows per int8 product: their packed codes and the batch's scores for them stay in L2 (about 256 KiB of scores).
int64_t int8_block_rows(int64_t n_queries) {
  return std::clamp<int64_t>((int64_t{64} << 10) / n_queries / 32 * 32, 64, 512);
}
// Blocks of the int8 product a thread takes at a time.
constexpr int kInt8ChunkBlocks = 4;

// Threads besides the caller that share a pass over n rows (or other items), from min_n of them on.
int helper_threads(int64_t n, int64_t min_n = kScanParallelRows) {
  return n >= min_n && !omp_in_parallel() ? omp_get_max_threads() - 1 : 0;
}

void normalize_rows(RowMatrix& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const float norm = m.row(i).norm();
    if (norm > 0) m.row(i) /= norm;
  }
}

constexpr int64_t kRun = 32;  // contiguous scores checked at once against a query's floor

// True when one of kRun contiguous scores reaches the floor (a fixed-size Eigen reduction: SIMD, no alignment peel).
bool any_reaches(const float* scores, float floor) {
  return Eigen::Map<const Eigen::Array<float, kRun, 1>>(scores).maxCoeff() >= floor;
}

// Appends the rows scoring at least the query's floor, and trims to the best `want` once twice that many wait.
// Contiguous scores are first checked a run at a time: once the floor has risen, most runs hold no candidate.
void collect(const float* scores, int64_t count, int64_t score_stride, const int64_t* ids, int want,
             std::vector<Scored>& kept, float& floor) {
  for (int64_t begin = 0; begin < count; begin += kRun) {
    const int64_t end = std::min(count, begin + kRun);
    if (score_stride == 1 && end - begin == kRun && !any_reaches(scores + begin, floor)) continue;
    for (int64_t i = begin; i < end; ++i) {
      const float score = scores[i * score_stride];
      if (score >= floor) kept.push_back({score, ids[i]});
    }
  }
  if (kept.size() >= 2 * static_cast<size_t>(want) + 16) {
    keep_best_k(kept, static_cast<size_t>(want));
    floor = kept.back().score;
  }
}

// Each thread's running candidates per query and their floors (see collect), merged into one top-`want` per query
// at the end.
struct ThreadTops {
  ThreadTops(int threads, int64_t n_queries)
      : best(static_cast<size_t>(threads), std::vector<std::vector<Scored>>(static_cast<size_t>(n_queries))),
        floors(static_cast<size_t>(threads), std::vector<float>(static_cast<size_t>(n_queries), kNoScore)) {}

  std::vector<std::vector<Scored>> merged(int want) {
    std::vector<std::vector<Scored>> out = std::move(best[0]);
    for (size_t qi = 0; qi < out.size(); ++qi) {
      for (size_t t = 1; t < best.size(); ++t) out[qi].insert(out[qi].end(), best[t][qi].begin(), best[t][qi].end());
      keep_top_k(out[qi], static_cast<size_t>(want));
    }
    return out;
  }

  std::vector<std::vector<std::vector<Scored>>> best;  // [thread][query]
  std::vector<std::vector<float>> floors;               // [thread][query]
};

}  // namespace

Metric parse_metric(const std::string& name) {
  if (name == "cosine") return Metric::Cosine;
  if (name == "ip" || name == "inner_product" || name == "dot") return Metric::InnerProduct;
  throw Error("unknown metric '" + name + "' (use 'cosine' or 'ip')");
}

std::string metric_name(Metric metric) { return metric == Metric::Cosine ? "cosine" : "ip"; }

VectorIndex::VectorIndex(int dim, Metric metric, const std::string& device, const std::string& dtype, int rerank)
    : dim_(dim), metric_(metric), rows_(dim, RowType::FP32) {
  if (dim <= 0) throw Error("vector dimension must be positive, got " + std::to_string(dim));
  if (rerank < 0) throw Error("rerank must be >= 0, got " + std::to_string(rerank));
  const DevicePlacement placement = resolve_device_placement(device, dtype);
  precision_ = placement.precision;
  cuda_device_ = placement.cuda_device;
  if (cuda_device_ >= 0) {
    if (rerank > 0) throw Error("rerank is for a compact index on the CPU, not on " + device);
    gpu_ = std::make_unique<GpuVectorIndex>(dim, metric, precision_, cuda_device_);
    return;
  }
  row_type_ = placement.row_type;
  rows_ = RowStore(dim, row_type_);
  if (rerank > 0 && row_type_ != RowType::FP32) {
    rerank_ = rerank;
    exact_ = std::make_unique<RowStore>(dim, RowType::FP32);
  }
}

VectorIndex::VectorIndex(std::unique_ptr<GpuVectorIndex> gpu, int cuda_device)
    : dim_(gpu->dim()), metric_(gpu->metric()), rows_(gpu->dim(), RowType::FP32), precision_(gpu->precision()),
      cuda_device_(cuda_device), gpu_(std::move(gpu)) {}

VectorIndex::VectorIndex(VectorIndex&& other) noexcept
    : dim_(other.dim_), metric_(other.metric_), rows_(other.dim_, RowType::FP32) {
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
  row_type_ = other.row_type_;
  rerank_ = other.rerank_;
  rows_ = std::move(other.rows_);
  exact_ = std::move(other.exact_);
  ids_ = std::move(other.ids_);
  next_id_ = other.next_id_;
  precision_ = other.precision_;
  cuda_device_ = other.cuda_device_;
  gpu_ = std::move(other.gpu_);
  row_file_ = std::move(other.row_file_);
  row_file_offset_ = other.row_file_offset_;
  read_listed_rows_ = other.read_listed_rows_;
  return *this;
}

std::string VectorIndex::device() const {
  return cuda_device_ < 0 ? "cpu" : "cuda:" + std::to_string(cuda_device_);
}

std::string VectorIndex::dtype() const {
  return gpu_ ? gpu::precision_name(precision_) : row_type_name(row_type_);
}

bool VectorIndex::mapped() const {
  std::shared_lock lock(mutex_);
  return rows_.mapped() || (exact_ && exact_->mapped());
}

size_t VectorIndex::memory_bytes() const {
  if (gpu_) return 0;
  std::shared_lock lock(mutex_);
  return rows_.owned_bytes() + (exact_ ? exact_->owned_bytes() : 0) + ids_.memory_bytes();
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
    if (ids_.contains(new_ids[i])) throw Error("id " + std::to_string(new_ids[i]) + " is already in the index");
  }
  std::vector<int64_t> sorted = new_ids;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) throw Error("duplicate ids in one add()");

  RowMatrix block = Eigen::Map<const RowMatrix>(vectors, n, dim_);
  if (!block.allFinite()) throw Error("vectors contain NaN or infinity");
  if (metric_ == Metric::Cosine) normalize_rows(block);

  rows_.append(block.data(), n);
  if (exact_) exact_->append(block.data(), n);
  ids_.append(new_ids.data(), n);
  next_id_ = std::max(next_id_, sorted.back() + 1);
}

int64_t VectorIndex::remove(const std::vector<int64_t>& ids) {
  if (gpu_) return gpu_->remove(ids);
  std::unique_lock lock(mutex_);
  int64_t removed = 0;
  for (int64_t id : ids) {
    const int64_t last = ids_.size() - 1;
    const int64_t row = ids_.remove(id);
    if (row < 0) continue;
    for (RowStore* store : {&rows_, exact_.get()}) {
      if (!store) continue;
      if (row != last) store->copy_row(last, row);
      store->pop_back();
    }
    ++removed;
  }
  return removed;
}

SearchResult VectorIndex::search(const float* queries, int64_t n_queries, int k) const {
  if (gpu_) return gpu_->search(queries, n_queries, k);
  std::shared_lock lock(mutex_);
  return search_rows(queries, n_queries, k, nullptr);
}

SearchResult VectorIndex::search_range(const float* queries, int64_t n_queries, int k, int64_t id_begin,
                                       int64_t id_end) const {
  if (gpu_) return gpu_->search_range(queries, n_queries, k, id_begin, id_end);
  std::shared_lock lock(mutex_);
  std::vector<int64_t> rows;
  for (int64_t row = 0; row < ids_.size(); ++row)
    if (ids_.id_at(row) >= id_begin && ids_.id_at(row) < id_end) rows.push_back(row);
  return search_rows(queries, n_queries, k, &rows);
}

SearchResult VectorIndex::search_rows(const float* queries, int64_t n_queries, int k,
                                      const std::vector<int64_t>* row_filter) const {
  if (k <= 0) throw Error("k must be positive, got " + std::to_string(k));
  if (n_queries < 0) throw Error("negative number of queries");
  RowMatrix q = Eigen::Map<const RowMatrix>(queries, n_queries, dim_);
  if (!q.allFinite()) throw Error("queries contain NaN or infinity");
  if (metric_ == Metric::Cosine) normalize_rows(q);

  const int want = exact_ ? std::max(k, rerank_) : k;
  Candidates best;
  if (!row_filter && n_queries <= kScanMaxQueries && scan::available()) {
    best = scan_top(q, want);
  } else if (row_type_ == RowType::INT8 && n_queries > kScanMaxQueries && gemm::int8_available()) {
    best = int8_top(q, want, row_filter);
  } else {
    best = block_top(q, want, row_filter);
  }
  if (exact_) rerank_exactly(q, best, k);

  SearchResult result;
  result.scores = RowMatrix::Constant(n_queries, k, kNoScore);
  result.ids = IdMatrix::Constant(n_queries, k, -1);
  for (int64_t qi = 0; qi < n_queries; ++qi)
    for (size_t j = 0; j < best[qi].size(); ++j) {
      result.scores(qi, j) = best[qi][j].score;
      result.ids(qi, j) = best[qi][j].id;
    }
  return result;
}

// The rows are cut into chunks of blocks that the threads take as they come free, each thread keeping its own
// top-`want` per query; their candidates are merged at the end.
VectorIndex::Candidates VectorIndex::scan_top(const RowMatrix& queries, int want) const {
  const int64_t n = ids_.size();
  const int n_queries = static_cast<int>(queries.rows());
  const RowsView view = rows_.view();
  const int64_t chunk_rows = kScanBlock * kScanChunkBlocks;
  const int64_t chunks = (n + chunk_rows - 1) / chunk_rows;
  const int helpers = helper_threads(n);
  ThreadTops tops(helpers + 1, n_queries);
  run_shared_chunks(chunks, helpers, [&](int thread, int64_t chunk) {
    Candidates& best = tops.best[static_cast<size_t>(thread)];
    std::vector<float>& floor = tops.floors[static_cast<size_t>(thread)];
    std::vector<float> scores(static_cast<size_t>(kScanBlock * n_queries));
    const int64_t end = std::min(n, (chunk + 1) * chunk_rows);
    for (int64_t begin = chunk * chunk_rows; begin < end; begin += kScanBlock) {
      const int64_t count = std::min(kScanBlock, end - begin);
      scan::score_rows(view, begin, count, queries.data(), n_queries, scores.data());
      for (int qi = 0; qi < n_queries; ++qi)
        collect(scores.data() + qi, count, n_queries, ids_.ids().data() + begin, want, best[qi], floor[qi]);
    }
  });
  return tops.merged(want);
}

// The queries are quantized once to u8 (a scale and zero point each); every block of stored int8 rows is packed as
// the VNNI product's B side straight from its codes (gathered first through a row filter) and scored against the
// whole batch, exactly in int32, then scaled by row x query scale. Threads take chunks of blocks as they come free,
// each keeping its own top-`want` per query; their candidates are merged at the end.
VectorIndex::Candidates VectorIndex::int8_top(const RowMatrix& q, int want,
                                              const std::vector<int64_t>* row_filter) const {
  const int64_t n_queries = q.rows();
  const int64_t row_end = row_filter ? static_cast<int64_t>(row_filter->size()) : ids_.size();
  const RowsView view = rows_.view();
  gemm::Int8Rows queries;
  queries.quantize(q.data(), static_cast<int>(n_queries), dim_, dim_);
  const int64_t block = int8_block_rows(n_queries);
  const int64_t chunk_rows = block * kInt8ChunkBlocks;
  const int helpers = helper_threads(row_end);
  ThreadTops tops(helpers + 1, n_queries);
  struct Workspace {  // a thread's buffers, kept from chunk to chunk
    gemm::Int8Matrix rows;
    std::vector<float> scores;
    std::vector<int8_t> gathered;
    std::vector<float> gathered_scales;
    std::vector<int64_t> gathered_ids;
  };
  std::vector<Workspace> workspaces(static_cast<size_t>(helpers + 1));
  run_shared_chunks((row_end + chunk_rows - 1) / chunk_rows, helpers, [&](int thread, int64_t chunk) {
    Candidates& best = tops.best[static_cast<size_t>(thread)];
    std::vector<float>& floor = tops.floors[static_cast<size_t>(thread)];
    auto& [rows, scores, gathered, gathered_scales, gathered_ids] = workspaces[static_cast<size_t>(thread)];
    scores.resize(static_cast<size_t>(n_queries * block));
    const int64_t end = std::min(row_end, (chunk + 1) * chunk_rows);
    for (int64_t begin = chunk * chunk_rows; begin < end; begin += block) {
      const int count = static_cast<int>(std::min(block, end - begin));
      const auto* codes = reinterpret_cast<const int8_t*>(view.row(begin));
      const float* scales = view.scales + begin;
      const int64_t* ids = ids_.ids().data() + begin;
      if (row_filter) {
        gathered.resize(static_cast<size_t>(count) * dim_);
        gathered_scales.resize(static_cast<size_t>(count));
        gathered_ids.resize(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) {
          const int64_t row = (*row_filter)[static_cast<size_t>(begin + i)];
          std::memcpy(gathered.data() + static_cast<int64_t>(i) * dim_, view.row(row), static_cast<size_t>(dim_));
          gathered_scales[static_cast<size_t>(i)] = view.scales[row];
          gathered_ids[static_cast<size_t>(i)] = ids_.id_at(row);
        }
        codes = gathered.data();
        scales = gathered_scales.data();
        ids = gathered_ids.data();
      }
      rows.pack_columns(codes, dim_, count, dim_, scales);
      gemm::multiply_quantized(queries, rows, scores.data(), count);
      for (int64_t qi = 0; qi < n_queries; ++qi)
        collect(scores.data() + qi * count, count, 1, ids, want, best[qi], floor[qi]);
    }
  });
  return tops.merged(want);
}

// Scores blocks of rows with one GEMM each (fp16 rows, int8 rows on CPUs without VNNI, and filtered rows, widened
// to fp32 first), then keeps a running top-`want` per query. With row_filter, positions index into it instead of
// the stored rows.
VectorIndex::Candidates VectorIndex::block_top(const RowMatrix& q, int want,
                                               const std::vector<int64_t>* row_filter) const {
  const int64_t n_queries = q.rows();
  const int64_t row_end = row_filter ? static_cast<int64_t>(row_filter->size()) : ids_.size();
  const RowsView view = rows_.view();
  Candidates best(static_cast<size_t>(n_queries));
  std::vector<float> floor(static_cast<size_t>(n_queries), kNoScore);
  // From kPackedMinQueries queries on, the packed micro-kernel (queries packed once as B) outruns Eigen's product.
  // Its scores come out rows x queries, so its blocks stay small enough for the per-query strided scan to hit cache.
  const bool packed = n_queries >= kPackedMinQueries;
  gemm::PackedMatrix packed_queries;
  if (packed) packed_queries.pack(q.data(), dim_, static_cast<int>(n_queries), 1, dim_);
  const int64_t step = packed ? packed_block_rows(n_queries) : block_rows(n_queries);
  RowMatrix gathered;
  RowMatrix scores;
  std::vector<int64_t> block_ids;
  for (int64_t begin = 0; begin < row_end; begin += step) {
    const int64_t count = std::min(step, row_end - begin);
    const int64_t* ids = ids_.ids().data() + begin;
    const float* rows = reinterpret_cast<const float*>(view.row(begin));
    if (row_filter || view.type != RowType::FP32) {
      gathered.resize(count, dim_);
      block_ids.resize(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) {
        const int64_t row = row_filter ? (*row_filter)[begin + i] : begin + i;
        view.decode(row, gathered.row(i).data());
        block_ids[static_cast<size_t>(i)] = ids_.id_at(row);
      }
      rows = gathered.data();
      ids = block_ids.data();
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
    for (int64_t qi = 0; qi < n_queries; ++qi) collect(scores.data() + qi * qs, count, rs, ids, want, best[qi], floor[qi]);
  }
  for (auto& kept : best) keep_top_k(kept, static_cast<size_t>(want));
  return best;
}

// Queries are re-scored in chunks that the threads take as they come free, once there are enough candidate rows
// (read from scattered places of the fp32 copy) to pay for the helpers.
void VectorIndex::rerank_exactly(const RowMatrix& queries, Candidates& best, int k) const {
  const RowsView exact = exact_->view();
  int64_t candidates = 0;
  for (const auto& kept : best) candidates += static_cast<int64_t>(kept.size());
  const int helpers = helper_threads(candidates, kRerankParallelRows);
  const auto n_queries = static_cast<int64_t>(best.size());
  run_shared_chunks((n_queries + kRerankChunkQueries - 1) / kRerankChunkQueries, helpers, [&](int, int64_t chunk) {
    for (int64_t qi = chunk * kRerankChunkQueries; qi < std::min(n_queries, (chunk + 1) * kRerankChunkQueries); ++qi) {
      std::vector<int64_t> rows;
      for (const Scored& candidate : best[qi]) rows.push_back(ids_.row_of(candidate.id));
      std::vector<float> scores(rows.size());
      score_listed(exact, rows.data(), static_cast<int64_t>(rows.size()), queries.row(qi).data(), 1, scores.data());
      for (size_t i = 0; i < rows.size(); ++i) best[qi][i].score = scores[i];
      keep_top_k(best[qi], static_cast<size_t>(k));
    }
  });
}

int64_t VectorIndex::row_of(int64_t id) const {
  const int64_t row = ids_.row_of(id);
  if (row < 0) throw Error("id " + std::to_string(id) + " is not in the index");
  return row;
}

int64_t VectorIndex::size() const {
  if (gpu_) return gpu_->size();
  std::shared_lock lock(mutex_);
  return ids_.size();
}

bool VectorIndex::contains(int64_t id) const {
  if (gpu_) return gpu_->contains(id);
  std::shared_lock lock(mutex_);
  return ids_.contains(id);
}

std::vector<int64_t> VectorIndex::ids() const {
  if (gpu_) return gpu_->ids();
  std::shared_lock lock(mutex_);
  return ids_.ids();
}

std::vector<float> VectorIndex::reconstruct(int64_t id) const {
  if (gpu_) return gpu_->reconstruct(id);
  std::shared_lock lock(mutex_);
  std::vector<float> out(static_cast<size_t>(dim_));
  (exact_ ? *exact_ : rows_).view().decode(row_of(id), out.data());
  return out;
}

void VectorIndex::inner_products(const float* query, const int64_t* ids, int64_t n, float* out) const {
  inner_products(query, 1, ids, n, out);
}

void VectorIndex::inner_products(const float* queries, int64_t n_queries, const int64_t* ids, int64_t n,
                                 float* out) const {
  if (n < 0 || n_queries < 0) throw Error("negative number of ids or queries");
  if (gpu_) {
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<float> row = gpu_->reconstruct(ids[i]);
      for (int64_t q = 0; q < n_queries; ++q)
        out[q * n + i] = Eigen::Map<const Eigen::RowVectorXf>(row.data(), dim_)
                             .dot(Eigen::Map<const Eigen::RowVectorXf>(queries + q * dim_, dim_));
    }
    return;
  }
  std::shared_lock lock(mutex_);
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = row_of(ids[i]);
  if (read_listed_rows_ && row_file_ && rows_.mapped() && !exact_)
    return score_read_rows(queries, n_queries, rows, out);
  score_listed(exact_ ? exact_->view() : rows_.view(), rows.data(), n, queries, n_queries, out);
}

// out[q * n + i] = <row rows[i], query q>: the scan reads each row once for all the queries (its scores come out
// row by row, so several queries are transposed into place).
void VectorIndex::score_listed(const RowsView& view, const int64_t* rows, int64_t n, const float* queries,
                               int64_t n_queries, float* out) const {
  if (!scan::available()) {
    // The listed rows widened to fp32 a block at a time and packed as the product's B side, so that the block stays
    // in cache from widening to product: a dot product per (row, query) pair reread every row for each query and did
    // not vectorize int8 rows; all rows widened first, then Eigen's product, copied them twice more through memory.
    thread_local RowMatrix decoded;
    thread_local gemm::PackedMatrix packed;
    for (int64_t begin = 0; begin < n; begin += kListedBlockRows) {
      const int64_t count = std::min(kListedBlockRows, n - begin);
      decoded.resize(count, dim_);
      for (int64_t i = 0; i < count; ++i) view.decode(rows[begin + i], decoded.row(i).data());
      packed.pack(decoded.data(), dim_, static_cast<int>(count), 1, dim_);
      gemm::multiply(queries, static_cast<int>(n_queries), dim_, packed, out + begin, n);
    }
    return;
  }
  if (n_queries == 1) return scan::score_listed_rows(view, rows, n, queries, 1, out);
  RowMatrix by_row(n, n_queries);
  scan::score_listed_rows(view, rows, n, queries, static_cast<int>(n_queries), by_row.data());
  Eigen::Map<RowMatrix>(out, n_queries, n) = by_row.transpose();
}

void VectorIndex::score_read_rows(const float* queries, int64_t n_queries, const std::vector<int64_t>& rows,
                                  float* out) const {
  const RowsView mapped = rows_.view();
  const size_t row_bytes = mapped.row_bytes();
  thread_local AlignedBytes codes;
  thread_local std::vector<float> scales;
  codes.resize(rows.size() * row_bytes);
  scales.resize(mapped.scales ? rows.size() : 0);
  for (size_t i = 0; i < rows.size();) {
    size_t run = 1;  // rows[i] .. rows[i] + run - 1 are listed one after another
    while (i + run < rows.size() && rows[i + run] == rows[i] + static_cast<int64_t>(run)) ++run;
    row_file_->read_at(row_file_offset_ + static_cast<uint64_t>(rows[i]) * row_bytes, codes.data() + i * row_bytes,
                       run * row_bytes);
    i += run;
  }
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = mapped.scales[rows[i]];
  const RowsView read{mapped.type, mapped.dim, static_cast<int64_t>(rows.size()), codes.data(),
                      scales.empty() ? nullptr : scales.data()};
  std::vector<int64_t> in_order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) in_order[i] = static_cast<int64_t>(i);
  score_listed(read, in_order.data(), static_cast<int64_t>(rows.size()), queries, n_queries, out);
}

}  // namespace relmem
