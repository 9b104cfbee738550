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
  // What one pass over a row gives: its dot product with `query`, |row ∘ weights| (weights of dim() floats) and,
  // when `mass` is given, the sum of mass's entries where the row is non-zero, whatever its values (how much of the
  // question the row covers).
  struct RowPass {
    float dot = 0.0f, weighted_norm = 0.0f, covered = 0.0f;
  };
  RowPass pass(int64_t id, const float* query, const float* weights, const float* mass = nullptr) const;
  // The same for the rows first .. first + count - 1 (a read of a mapped file's consecutive rows at once), into out.
  void passes(int64_t first, int64_t count, const float* query, const float* weights, const float* mass,
              RowPass* out) const;
  // The row as dim() floats (zeros where it stores none); relmem::Error for an unknown id.
  std::vector<float> dense(int64_t id) const;
  // Calls visit(index, value) for each non-zero of the row, indices ascending; relmem::Error for an unknown id.
  template <typename Visit>
  void for_each_nonzero(int64_t id, Visit&& visit) const {
    const Row r = row(id, scratch());
    for (size_t i = 0; i < r.size; ++i) visit(r.entries[i].index, r.entries[i].value);
  }
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
  // mmap: a version 2 file of 256 KiB or more is opened without reading its rows: its header, frequencies, ids and
  // offsets are mapped and checked at once, and each row is read from the file (pread, through the page cache) when
  // a dot product needs it, its entries checked then; the rows are copied into memory the first time they change.
  // The rows are read rather than mapped: the rows a question needs lie scattered over the file, and each one read
  // through a mapping would keep its whole large page-cache folio mapped (hundreds of KiB) in resident memory.
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
  // The row's entries: in place, or read from the mapped file into `buffer`; relmem::Error for an unknown id.
  Row row(int64_t id, std::vector<Entry>& buffer) const;
  // A mapped file's row: its entries are first .. first + size - 1 of the entries section.
  bool locate(int64_t id, uint64_t& first, uint64_t& size) const;
  void own();  // copies a mapped file's rows into rows_
  static std::vector<Entry>& scratch();  // rows read from a mapped file land here: one buffer per thread
  void check(const Entry* entries, size_t size, int64_t id) const;  // relmem::Error for an index past dim()

  int dim_;
  std::vector<int64_t> document_frequency_;
  std::unordered_map<int64_t, std::vector<Entry>> rows_;
  // A mapped version 2 file: ids ascending, row r's entries at offsets[r] in the entries section.
  std::shared_ptr<const MappedFile> mapped_;
  const int64_t* mapped_ids_ = nullptr;
  const uint64_t* mapped_offsets_ = nullptr;
  uint64_t mapped_entries_offset_ = 0;  // of the entries section in the file
  int64_t mapped_rows_ = 0;
  bool mapped_consecutive_ = false;  // ids are one run (the usual case): a row is found without a search
};

}  // namespace relmem
