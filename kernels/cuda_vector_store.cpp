// The CUDA VectorStore: rows in device memory (fp32/fp16/bf16, leading dimension padded to 8),
// uploads through pinned double buffers, and the three search paths (fused, GEMM + tile selection,
// GEMM + sort baseline), all on one stream. Device work is serialized by a mutex.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_resources.hpp"
#include "kernel_launch.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/index/gpu/topk_keys.hpp"
#include "relmem/index/gpu/vector_store.hpp"

namespace relmem::gpu {
namespace {

using kernels::SelectLayout;

constexpr size_t kUploadBytes = size_t{32} << 20;      // floats per pinned upload buffer
// GemmSelect score tile (128 MiB): each tile's merge costs tens of microseconds whatever its size, so few large ones.
constexpr int64_t kScoreTileFloats = int64_t{32} << 20;
constexpr int64_t kGemmQueryChunk = 4096;
constexpr int64_t kSortItemsBudget = int64_t{256} << 20;  // GemmSort scores per chunk
constexpr int64_t kCompactionRows = 65536;

cudaDataType cuda_type(Precision precision) {
  switch (precision) {
    case Precision::FP32: return CUDA_R_32F;
    case Precision::FP16: return CUDA_R_16F;
    case Precision::BF16: return CUDA_R_16BF;
  }
  throw Error("invalid precision value");
}

class CudaVectorStore : public VectorStore {
 public:
  CudaVectorStore(int dim, Precision precision, bool normalize, int device)
      : dim_(dim),
        precision_(precision),
        normalize_(normalize),
        device_(device),
        ld_(kernels::padded_ld(dim)),
        row_bytes_(ld_ * (precision == Precision::FP32 ? 4 : 2)),
        storage_(device),
        staging_{DeviceBuffer(device), DeviceBuffer(device)},
        query_floats_(device),
        queries_(device),
        mask_(device),
        partial_(device),
        result_keys_(device),
        scores_(device),
        sorted_(device),
        sort_values_(device),
        sorted_values_(device),
        sort_offsets_(device),
        sort_temp_(device),
        scratch_(device) {
    if (dim <= 0) throw Error("vector dimension must be positive, got " + std::to_string(dim));
    const CudaDeviceInfo info = cuda_device_info(device);  // throws when there is no such device
    multiprocessors_ = info.multiprocessors;
    DeviceGuard guard(device_);
    stream_ = std::make_unique<Stream>();
    cublas_ = std::make_unique<CublasHandle>(stream_->get());
    uploaded_[0] = std::make_unique<Event>();
    uploaded_[1] = std::make_unique<Event>();
  }

  ~CudaVectorStore() override {
    // Members free their memory after this body; make sure nothing is still running on them.
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_->get());
  }

  int dim() const override { return dim_; }
  Precision precision() const override { return precision_; }
  bool normalizes() const override { return normalize_; }
  int64_t rows() const override {
    std::lock_guard lock(mutex_);
    return rows_;
  }

  void append(const float* rows, int64_t n) override {
    if (n <= 0) return;
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    reserve_rows(rows_ + n);
    const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(kUploadBytes / (sizeof(float) * dim_)));
    const size_t chunk_bytes = static_cast<size_t>(std::min(chunk_rows, n)) * dim_ * sizeof(float);
    for (int b = 0; b < 2; ++b) {
      pinned_upload_[b].reserve(chunk_bytes);
      staging_[b].reserve(chunk_bytes, "uploading vectors");
    }
    const cudaStream_t stream = stream_->get();
    int chunk = 0;
    for (int64_t first = 0; first < n; first += chunk_rows, ++chunk) {
      const int b = chunk % 2;
      const int64_t count = std::min(chunk_rows, n - first);
      const size_t bytes = static_cast<size_t>(count) * dim_ * sizeof(float);
      // Buffer b was last used two chunks ago; wait until its conversion finished.
      if (chunk >= 2) check_cuda(cudaEventSynchronize(uploaded_[b]->get()), "waiting for an upload");
      std::memcpy(pinned_upload_[b].get(), rows + first * dim_, bytes);
      check_cuda(cudaMemcpyAsync(staging_[b].get(), pinned_upload_[b].get(), bytes, cudaMemcpyHostToDevice, stream),
                 "uploading vectors");
      check_cuda(kernels::normalize_convert(staging_[b].get<float>(), count, dim_, normalize_, precision_,
                                            row_pointer(rows_ + first), ld_, stream),
                 "converting vectors");
      check_cuda(cudaEventRecord(uploaded_[b]->get(), stream), "recording an upload");
    }
    stream_->synchronize("adding vectors");
    rows_ += n;
  }

  void keep_rows(const std::vector<int64_t>& rows) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    const int64_t kept = static_cast<int64_t>(rows.size());
    int64_t first_moved = 0;
    while (first_moved < kept && rows[first_moved] == first_moved) ++first_moved;
    if (first_moved < kept) {
      // Chunk by chunk, in increasing order: a chunk only reads rows at or after its own start
      // (rows[i] >= i), which earlier chunks never wrote, and the gather goes through scratch.
      const int64_t moved = kept - first_moved;
      const size_t index_bytes = static_cast<size_t>(moved) * sizeof(int64_t);
      const size_t gathered_offset = (index_bytes + 15) / 16 * 16;
      const int64_t chunk_rows = std::min(kCompactionRows, moved);
      scratch_.reserve(gathered_offset + static_cast<size_t>(chunk_rows) * row_bytes_, "removing vectors");
      int64_t* sources = scratch_.get<int64_t>();
      unsigned char* gathered = scratch_.get<unsigned char>() + gathered_offset;
      const cudaStream_t stream = stream_->get();
      check_cuda(cudaMemcpyAsync(sources, rows.data() + first_moved, index_bytes, cudaMemcpyHostToDevice, stream),
                 "uploading kept rows");
      for (int64_t start = first_moved; start < kept; start += chunk_rows) {
        const int64_t count = std::min(chunk_rows, kept - start);
        check_cuda(kernels::gather_rows(storage_.get(), sources + (start - first_moved), count, row_bytes_, gathered,
                                        stream),
                   "compacting vectors");
        check_cuda(cudaMemcpyAsync(row_pointer(start), gathered, static_cast<size_t>(count) * row_bytes_,
                                   cudaMemcpyDeviceToDevice, stream),
                   "compacting vectors");
      }
      stream_->synchronize("removing vectors");
    }
    rows_ = kept;
  }

  void read_rows(int64_t begin, int64_t n, float* out) const override {
    if (n <= 0) return;
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    if (begin < 0 || begin + n > rows_) throw Error("row range out of bounds");
    const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(kUploadBytes / (sizeof(float) * dim_)));
    scratch_.reserve(static_cast<size_t>(std::min(chunk_rows, n)) * dim_ * sizeof(float), "reading vectors");
    for (int64_t first = 0; first < n; first += chunk_rows) {
      const int64_t count = std::min(chunk_rows, n - first);
      check_cuda(kernels::widen_rows(row_pointer(begin + first), count, ld_, dim_, precision_, scratch_.get<float>(),
                                     stream_->get()),
                 "reading vectors");
      check_cuda(cudaMemcpyAsync(out + first * dim_, scratch_.get(), static_cast<size_t>(count) * dim_ * sizeof(float),
                                 cudaMemcpyDeviceToHost, stream_->get()),
                 "downloading vectors");
      stream_->synchronize("reading vectors");
    }
  }

  void search(const float* queries, int64_t n_queries, int k, const RowSubset& subset, SearchAlgorithm algorithm,
              float* out_scores, int64_t* out_rows) const override {
    if (n_queries <= 0) return;
    if (k <= 0) throw Error("k must be positive, got " + std::to_string(k));
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    const int64_t begin = std::max<int64_t>(0, subset.begin);
    const int64_t end = std::min(rows_, subset.end);
    const size_t n_results = static_cast<size_t>(n_queries) * k;
    if (end <= begin) {
      std::vector<uint64_t> padding(n_results, kPaddingKey);
      decode_topk_keys(padding.data(), static_cast<int64_t>(n_results), out_scores, out_rows);
      return;
    }
    algorithm = resolve(algorithm, n_queries, k, subset.mask != nullptr);
    upload_queries(queries, n_queries);
    const uint8_t* mask = nullptr;
    if (subset.mask) {
      mask_.reserve(static_cast<size_t>(rows_), "the search mask");
      check_cuda(cudaMemcpyAsync(mask_.get<uint8_t>() + begin, subset.mask + begin, static_cast<size_t>(end - begin),
                                 cudaMemcpyHostToDevice, stream_->get()),
                 "uploading the search mask");
      mask = mask_.get<uint8_t>();
    }
    result_keys_.reserve(n_results * sizeof(uint64_t), "search results");
    switch (algorithm) {
      case SearchAlgorithm::Fused:
      case SearchAlgorithm::FusedSimt:
        search_fused(n_queries, k, begin, end, mask, algorithm == SearchAlgorithm::Fused);
        break;
      case SearchAlgorithm::GemmSelect: search_gemm_select(n_queries, k, begin, end, mask); break;
      case SearchAlgorithm::GemmSort: search_gemm_sort(n_queries, k, begin, end); break;
      case SearchAlgorithm::Auto: throw Error("unresolved search algorithm");
    }
    pinned_keys_.reserve(n_results * sizeof(uint64_t));
    check_cuda(cudaMemcpyAsync(pinned_keys_.get(), result_keys_.get(), n_results * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost, stream_->get()),
               "downloading search results");
    stream_->synchronize("searching");
    decode_topk_keys(pinned_keys_.get<uint64_t>(), static_cast<int64_t>(n_results), out_scores, out_rows);
  }

 private:
  void* row_pointer(int64_t row) const { return storage_.get<unsigned char>() + row * row_bytes_; }

  // Grows the storage to hold `rows` rows, keeping the stored ones.
  void reserve_rows(int64_t rows) {
    if (rows <= capacity_) return;
    const int64_t capacity = std::max({rows, capacity_ * 2, int64_t{1024}});
    DeviceBuffer grown(device_);
    grown.reserve(static_cast<size_t>(capacity) * row_bytes_, "stored vectors");
    if (rows_ > 0) {
      check_cuda(cudaMemcpyAsync(grown.get(), storage_.get(), static_cast<size_t>(rows_) * row_bytes_,
                                 cudaMemcpyDeviceToDevice, stream_->get()),
                 "growing the vector storage");
      stream_->synchronize("growing the vector storage");
    }
    storage_.swap(grown);
    capacity_ = capacity;
  }

  SearchAlgorithm resolve(SearchAlgorithm algorithm, int64_t n_queries, int k, bool masked) const {
    if (algorithm == SearchAlgorithm::Auto) {
      if (k > kMaxSelectK && !masked) {
        algorithm = SearchAlgorithm::GemmSort;  // the only one without a k limit
      } else {
        const bool streams = kernels::stream_applies(k, n_queries, precision_, ld_);
        algorithm = n_queries <= (streams ? kStreamFusedMaxQueries : kFusedMaxQueries) ? SearchAlgorithm::Fused
                                                                                      : SearchAlgorithm::GemmSelect;
      }
    }
    if (algorithm == SearchAlgorithm::GemmSort) {
      if (masked) throw Error("the gemm_sort search baseline does not support searching a subset of ids");
    } else if (k > kMaxSelectK) {
      throw Error("k = " + std::to_string(k) + " exceeds the GPU top-k limit of " + std::to_string(kMaxSelectK) +
                  " (the gemm_sort algorithm has no limit)");
    }
    return algorithm;
  }

  // queries_ = the n queries normalized (cosine) and converted to the storage precision, ld_ apart.
  void upload_queries(const float* queries, int64_t n) const {
    const size_t bytes = static_cast<size_t>(n) * dim_ * sizeof(float);
    pinned_queries_.reserve(bytes);
    query_floats_.reserve(bytes, "queries");
    queries_.reserve(static_cast<size_t>(n) * row_bytes_, "queries");
    std::memcpy(pinned_queries_.get(), queries, bytes);
    check_cuda(cudaMemcpyAsync(query_floats_.get(), pinned_queries_.get(), bytes, cudaMemcpyHostToDevice,
                               stream_->get()),
               "uploading queries");
    check_cuda(kernels::normalize_convert(query_floats_.get<float>(), n, dim_, normalize_, precision_, queries_.get(),
                                          ld_, stream_->get()),
               "converting queries");
  }

  const void* query_pointer(int64_t query) const { return queries_.get<unsigned char>() + query * row_bytes_; }

  // Contiguous splits of n_rows rows for `groups` query groups: enough blocks for `waves` waves of
  // `resident` blocks per multiprocessor, without splits shorter than two slots.
  int plan_splits(int64_t groups, int64_t n_rows, const SelectLayout& layout, int resident, int waves) const {
    const int64_t target_blocks = static_cast<int64_t>(waves) * resident * multiprocessors_;
    int64_t splits = (target_blocks + groups - 1) / groups;
    const int64_t shortest = std::max<int64_t>(kernels::kTileRows, 2 * layout.slot_length);
    splits = std::min(splits, std::max<int64_t>(1, n_rows / shortest));
    return static_cast<int>(std::clamp<int64_t>(splits, 1, 65535));
  }

  void search_fused(int64_t n_queries, int k, int64_t begin, int64_t end, const uint8_t* mask,
                    bool tensor_cores) const {
    const SelectLayout layout = kernels::select_layout(k);
    const int group = kernels::fused_group(k, n_queries, precision_, ld_, tensor_cores);
    const int64_t groups = (n_queries + group - 1) / group;
    // One wave: every block streams its split once, and a second wave would only lengthen the merge.
    const int resident = kernels::fused_blocks_per_multiprocessor(k, n_queries, precision_, ld_, tensor_cores);
    const int splits = plan_splits(groups, end - begin, layout, resident, 1);
    partial_.reserve(static_cast<size_t>(n_queries) * splits * k * sizeof(uint64_t), "partial top-k lists");
    kernels::FusedTopkArgs args;
    args.queries = queries_.get();
    args.n_queries = n_queries;
    args.rows = storage_.get();
    args.ld = ld_;
    args.row_begin = begin;
    args.row_end = end;
    args.mask = mask;
    args.k = k;
    args.n_splits = splits;
    args.partial = partial_.get<uint64_t>();
    check_cuda(kernels::fused_topk(args, precision_, tensor_cores, stream_->get()), "launching the fused top-k");
    check_cuda(kernels::merge_topk(partial_.get<uint64_t>(), n_queries, splits, k, result_keys_.get<uint64_t>(), k,
                                   stream_->get()),
               "merging top-k lists");
  }

  // scores[q * ldc + j] = <query first_query + q, row first_row + j> for q < n_queries, j < n_rows.
  void gemm_scores(int64_t first_query, int64_t n_queries, int64_t first_row, int64_t n_rows, float* scores,
                   int64_t ldc) const {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const cudaDataType type = cuda_type(precision_);
    // cuBLAS is column-major: the row-major (n_queries x ldc) score tile is its (ldc x n_queries)
    // transpose, = stored_rows (column-major ld x n_rows, transposed) * queries (ld x n_queries).
    check_cublas(cublasGemmEx(cublas_->get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_rows),
                              static_cast<int>(n_queries), static_cast<int>(ld_), &alpha, row_pointer(first_row), type,
                              static_cast<int>(ld_), query_pointer(first_query), type, static_cast<int>(ld_), &beta,
                              scores, CUDA_R_32F, static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "computing scores");
  }

  void search_gemm_select(int64_t n_queries, int k, int64_t begin, int64_t end, const uint8_t* mask) const {
    const SelectLayout layout = kernels::select_layout(k);
    const int64_t query_chunk = std::min(n_queries, kGemmQueryChunk);
    const int64_t n_rows = end - begin;
    const int64_t tile_columns = std::max<int64_t>(kernels::kTileRows, kScoreTileFloats / query_chunk);
    const int64_t column_chunk =
        std::min(tile_columns, n_rows + kernels::kTileRows - 1) / kernels::kTileRows * kernels::kTileRows;
    const int64_t groups = (query_chunk + layout.group - 1) / layout.group;
    // About as many selection blocks as four per multiprocessor: enough to read a tile at full speed.
    const int splits = plan_splits(groups, column_chunk, layout, 4, 1);
    const int n_lists = 1 + splits;  // list 0 holds the running top-k over the chunks done so far
    scores_.reserve(static_cast<size_t>(query_chunk) * column_chunk * sizeof(float), "score tiles");
    partial_.reserve(static_cast<size_t>(query_chunk) * n_lists * k * sizeof(uint64_t), "partial top-k lists");
    const cudaStream_t stream = stream_->get();
    uint64_t* partial = partial_.get<uint64_t>();
    for (int64_t first_query = 0; first_query < n_queries; first_query += query_chunk) {
      const int64_t count = std::min(query_chunk, n_queries - first_query);
      check_cuda(cudaMemsetAsync(partial, 0, static_cast<size_t>(count) * n_lists * k * sizeof(uint64_t), stream),
                 "clearing top-k lists");
      for (int64_t first_row = begin; first_row < end; first_row += column_chunk) {
        const int64_t columns = std::min(column_chunk, end - first_row);
        gemm_scores(first_query, count, first_row, columns, scores_.get<float>(), column_chunk);
        kernels::TileSelectArgs args;
        args.scores = scores_.get<float>();
        args.n_queries = count;
        args.ld = column_chunk;
        args.n_columns = columns;
        args.first_row = first_row;
        args.mask = mask;
        args.k = k;
        args.n_splits = splits;
        args.partial = partial;
        args.n_lists = n_lists;
        args.first_list = 1;
        args.seed_from_list0 = first_row > begin;
        check_cuda(kernels::tile_select(args, stream), "selecting top-k of a score tile");
        check_cuda(kernels::merge_topk(partial, count, n_lists, k, partial, static_cast<int64_t>(n_lists) * k, stream),
                   "merging top-k lists");
      }
      check_cuda(cudaMemcpy2DAsync(result_keys_.get<uint64_t>() + first_query * k, k * sizeof(uint64_t), partial,
                                   static_cast<size_t>(n_lists) * k * sizeof(uint64_t), k * sizeof(uint64_t),
                                   static_cast<size_t>(count), cudaMemcpyDeviceToDevice, stream),
                 "collecting top-k lists");
    }
  }

  void search_gemm_sort(int64_t n_queries, int k, int64_t begin, int64_t end) const {
    const int64_t n_rows = end - begin;
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free GPU memory");
    // Scores, sorted scores, columns and sorted columns: 16 bytes per item, plus CUB's scratch.
    const int64_t budget = std::min<int64_t>({kSortItemsBudget, static_cast<int64_t>(free_bytes / 40),
                                              int64_t{0x7FFFFFFF} - 1});
    const int64_t chunk = std::clamp<int64_t>(budget / n_rows, 1, n_queries);
    if (chunk * n_rows >= 0x7FFFFFFF) throw Error("too many rows for the gemm_sort baseline");
    const size_t items = static_cast<size_t>(chunk * n_rows);
    scores_.reserve(items * sizeof(float), "score matrix");
    sorted_.reserve(items * sizeof(float), "sorted scores");
    sort_values_.reserve(items * sizeof(int), "sort values");
    sorted_values_.reserve(items * sizeof(int), "sorted values");
    sort_offsets_.reserve(static_cast<size_t>(chunk + 1) * sizeof(int), "segment offsets");
    size_t temp_bytes = 0;
    check_cuda(kernels::sort_select(scores_.get<float>(), chunk, n_rows, begin, k, sorted_.get<float>(),
                                    sort_values_.get<int>(), sorted_values_.get<int>(), sort_offsets_.get<int>(),
                                    nullptr, temp_bytes, result_keys_.get<uint64_t>(), stream_->get()),
               "sizing the segmented sort");
    sort_temp_.reserve(std::max<size_t>(temp_bytes, 1), "segmented sort scratch");
    temp_bytes = sort_temp_.bytes();
    for (int64_t first_query = 0; first_query < n_queries; first_query += chunk) {
      const int64_t count = std::min(chunk, n_queries - first_query);
      gemm_scores(first_query, count, begin, n_rows, scores_.get<float>(), n_rows);
      check_cuda(kernels::sort_select(scores_.get<float>(), count, n_rows, begin, k, sorted_.get<float>(),
                                      sort_values_.get<int>(), sorted_values_.get<int>(), sort_offsets_.get<int>(),
                                      sort_temp_.get(), temp_bytes, result_keys_.get<uint64_t>() + first_query * k,
                                      stream_->get()),
                 "sorting scores");
    }
  }

  const int dim_;
  const Precision precision_;
  const bool normalize_;
  const int device_;
  const int64_t ld_;
  const int64_t row_bytes_;
  int multiprocessors_ = 1;
  mutable std::mutex mutex_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<CublasHandle> cublas_;
  std::unique_ptr<Event> uploaded_[2];
  DeviceBuffer storage_;
  int64_t rows_ = 0;
  int64_t capacity_ = 0;
  PinnedBuffer pinned_upload_[2];
  DeviceBuffer staging_[2];
  mutable PinnedBuffer pinned_queries_;
  mutable PinnedBuffer pinned_keys_;
  mutable DeviceBuffer query_floats_;
  mutable DeviceBuffer queries_;
  mutable DeviceBuffer mask_;
  mutable DeviceBuffer partial_;
  mutable DeviceBuffer result_keys_;
  mutable DeviceBuffer scores_;
  mutable DeviceBuffer sorted_;
  mutable DeviceBuffer sort_values_;
  mutable DeviceBuffer sorted_values_;
  mutable DeviceBuffer sort_offsets_;
  mutable DeviceBuffer sort_temp_;
  mutable DeviceBuffer scratch_;
};

}  // namespace

std::unique_ptr<VectorStore> make_cuda_vector_store(int dim, Precision precision, bool normalize, int device) {
  return std::make_unique<CudaVectorStore>(dim, precision, normalize, device);
}

}  // namespace relmem::gpu
