#pragma once
// Sparse rows keyed by int64 id, for lexical (hashing) embeddings: a card has ~1k non-zeros out of thousands of
// dimensions, so storing only those keeps a large collection's lexical vectors small. Dot products take a dense
// query. File format version 2 (little-endian; sections start at multiples of 64 bytes, the gaps zero, so a mapped
// file is used in place):
//   "RMSV" | u32 2 | u32 dim | u32 0 | u64 rows | u64 non-zeros | u64 header checksum (FNV-1a over 64-bit words of
//   the fields before it, the frequencies, ids and offsets) | i64 document_frequency[dim] | i64 ids[rows] (ascending)
//   | u64 offsets[rows + 1] (row r's entries are offsets[r] .. offsets[r + 1] - 1) | (u32 index, f32 value)[non-zeros]
//   | u64 FNV-1a checksum of every byte before it.
// Version 1 (still read): "RMSV" | u32 1 | u32 dim | u64 rows | per row: i64 id, u32 nnz, (u32 index, f32 value)*nnz
// | u64 FNV-1a checksum.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace relmem {

class MappedFile;

class SparseVectors {
 public:
  explicit SparseVectors(int dim = 1);

  // Stores the non-zeros of a dense row of dim() floats, replacing any row with the same id.
  void add(int64_t id, const float* dense);
  bool remove(int64_t id);
  // Dot product of the row with a dense query of dim() floats; relmem::Error for an unknown id.
  float dot(int64_t id, const float* query) const;
  // The dot product with `query` and |row ∘ weights| (weights of dim() floats), in one pass over the row.
  std::pair<float, float> dot_and_weighted_norm(int64_t id, const float* query, const float* weights) const;
  // The row as dim() floats (zeros where it stores none); relmem::Error for an unknown id.
  std::vector<float> dense(int64_t id) const;
  // Per dimension, how many rows have a non-zero there.
  const std::vector<int64_t>& document_frequency() const { return document_frequency_; }
  std::vector<int64_t> ids() const;  // ascending

  bool contains(int64_t id) const;
  int64_t size() const;
  int dim() const { return dim_; }
  // Bytes of the stored non-zeros and ids held in this process's own memory (a mapped file's rows excluded).
  size_t memory_bytes() const;
  bool mapped() const { return mapped_ != nullptr; }

  void save(const std::string& path) const;
  // mmap: a version 2 file of 256 KiB or more is mapped, its rows used in place and read from disk as dot products
  // touch them (its header, frequencies, ids and offsets are checked at once, the entries only by a full load); the
  // rows are copied into memory the first time they change.
  static SparseVectors load(const std::string& path, bool mmap = false);

 private:
  struct Entry {
    uint32_t index;
    float value;
  };
  struct Row {
    const Entry* entries = nullptr;
    size_t size = 0;
  };
  Row row(int64_t id) const;  // relmem::Error for an unknown id
  bool find(int64_t id, Row& out) const;
  void own();  // copies a mapped file's rows into rows_

  int dim_;
  std::vector<int64_t> document_frequency_;
  std::unordered_map<int64_t, std::vector<Entry>> rows_;
  // A mapped version 2 file: ids ascending, row r's entries at entries + offsets[r].
  std::shared_ptr<const MappedFile> mapped_;
  const int64_t* mapped_ids_ = nullptr;
  const uint64_t* mapped_offsets_ = nullptr;
  const Entry* mapped_entries_ = nullptr;
  int64_t mapped_rows_ = 0;
  bool mapped_consecutive_ = false;  // ids are one run (the usual case): a row is found without a search
};

}  // namespace relmem
