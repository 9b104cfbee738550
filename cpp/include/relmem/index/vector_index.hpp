#pragma once
// Brute-force vector index: vectors with int64 ids, cosine or inner product. On the CPU the rows are stored as fp32,
// fp16 or int8 (RowStore) and scored with fp32 accumulation: batches of up to kScanMaxQueries queries by a scan that
// reads each row once for the whole batch and keeps every query's top-k while scanning, larger batches by a packed
// GEMM over blocks of rows (on int8 rows with AVX512-VNNI, an int8 product against the batch quantized to u8). A compact index can keep an fp32 copy and re-rank its top `rerank` candidates exactly.
// With device "cuda" (or "cuda:N") every operation is forwarded to a GpuVectorIndex storing fp32, fp16 or bf16.
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "relmem/common.hpp"
#include "relmem/device/precision.hpp"
#include "relmem/index/id_rows.hpp"
#include "relmem/index/row_store.hpp"
#include "relmem/index/topk.hpp"

namespace relmem {

class MappedFile;

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
  static constexpr int kScanMaxQueries = 32;

  // device: "cpu", "cuda" or "cuda:N"; dtype: "fp32", "fp16" or "int8" on cpu, "fp32", "fp16" or "bf16" on cuda.
  // rerank > 0 (cpu, fp16 or int8): also keep the fp32 rows and re-score the best max(k, rerank) candidates of every
  // search with them. Throws relmem::Error for an unknown device or dtype, and on cuda when relmem was built
  // without CUDA or the device is not usable.
  VectorIndex(int dim, Metric metric = Metric::Cosine, const std::string& device = "cpu",
              const std::string& dtype = "fp32", int rerank = 0);
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

  // The file holds the CPU dtype's rows (a cuda index saves fp32) and the fp32 copy when it has one.
  void save(const std::string& path) const;
  // dtype "" keeps the file's (fp32 on cuda); another dtype converts. mmap (cpu, the file's dtype, a version 2
  // file of at least 256 KiB): the rows stay in the file, mapped, and are read from disk as searches touch them; the
  // header, ids and scales are checked against their own checksum, the rows only by a full load or verify(). Other
  // files and conversions are read into memory.
  static VectorIndex load(const std::string& path, const std::string& device = "cpu", const std::string& dtype = "",
                          bool mmap = false);
  // Checks a file's whole checksum (relmem::Error naming the problem), without loading it.
  static void verify(const std::string& path);

  int dim() const { return dim_; }
  Metric metric() const { return metric_; }
  // "cpu" or "cuda:N".
  std::string device() const;
  gpu::Precision precision() const { return precision_; }
  // "fp32", "fp16", "int8" (cpu) or "bf16" (cuda).
  std::string dtype() const;
  int rerank() const { return rerank_; }
  // Whether the rows are read from a mapped file.
  bool mapped() const;
  // Bytes this index holds in its own memory on the CPU: rows, scales, the fp32 copy and ids (mapped rows excluded).
  size_t memory_bytes() const;
  int64_t size() const;
  bool contains(int64_t id) const;
  std::vector<int64_t> ids() const;
  // The stored (normalized, for cosine) vector of an id.
  std::vector<float> reconstruct(int64_t id) const;
  // Exact inner products of one query (dim() floats, used as given) with the stored rows of n ids, into out[0..n);
  // relmem::Error for an unknown id. Scores a few chosen rows without copying them out.
  void inner_products(const float* query, const int64_t* ids, int64_t n, float* out) const;
  // The same for n_queries queries (rows of dim() floats), each listed row read once for all of them:
  // out[q * n + i] = <query q, row of ids[i]>.
  void inner_products(const float* queries, int64_t n_queries, const int64_t* ids, int64_t n, float* out) const;
  // On: inner_products of a mapped index reads the listed rows from the file (pread, one read per run of consecutive
  // rows) instead of through the mapping, for rows picked at random from a large file: read through a mapping, each
  // keeps its whole large page-cache folio (hundreds of KiB) in this process's resident memory. Other indexes and
  // calls are unaffected.
  void read_listed_rows(bool on) { read_listed_rows_ = on; }

 private:
  VectorIndex(std::unique_ptr<GpuVectorIndex> gpu, int cuda_device);
  using Candidates = std::vector<std::vector<Scored>>;  // per query
  SearchResult search_rows(const float* queries, int64_t n_queries, int k,
                           const std::vector<int64_t>* row_filter) const;
  Candidates scan_top(const RowMatrix& queries, int want) const;
  Candidates block_top(const RowMatrix& queries, int want, const std::vector<int64_t>* row_filter) const;
  // Batches above kScanMaxQueries on int8 rows, where the CPU has AVX512-VNNI: queries quantized to u8, int8 product.
  Candidates int8_top(const RowMatrix& queries, int want, const std::vector<int64_t>* row_filter) const;
  void rerank_exactly(const RowMatrix& queries, Candidates& best, int k) const;
  int64_t row_of(int64_t id) const;  // relmem::Error for an unknown id
  // inner_products of listed rows read from row_file_ (see read_listed_rows).
  void score_read_rows(const float* queries, int64_t n_queries, const std::vector<int64_t>& rows, float* out) const;
  void score_listed(const RowsView& view, const int64_t* rows, int64_t n, const float* queries, int64_t n_queries,
                    float* out) const;

  int dim_;
  Metric metric_;
  RowType row_type_ = RowType::FP32;
  int rerank_ = 0;
  RowStore rows_;
  std::unique_ptr<RowStore> exact_;  // fp32 rows of a compact index with rerank > 0
  IdRows ids_;
  int64_t next_id_ = 0;
  mutable std::shared_mutex mutex_;
  gpu::Precision precision_ = gpu::Precision::FP32;
  int cuda_device_ = -1;                // -1 on cpu
  std::unique_ptr<GpuVectorIndex> gpu_;  // set on cuda: everything is forwarded to it
  std::shared_ptr<const MappedFile> row_file_;  // a mapped index's file, its rows at row_file_offset_
  uint64_t row_file_offset_ = 0;
  bool read_listed_rows_ = false;
};

}  // namespace relmem
