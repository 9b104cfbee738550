#include "relmem/memories/text/sparse_vectors.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../../common/checksummed_file.hpp"
#include "../../common/mapped_file.hpp"
#include "relmem/common.hpp"

namespace relmem {
namespace {

// Byte-wise whole-file checksum: version 1 files carry that one and the format has one for all versions.
constexpr ChecksummedFormat kSparseVectorFile{"sparse vector", "RMSV", 1, 2, /*checksum_word_size=*/1};
constexpr uint64_t kPreambleSize = 8;  // magic and version

struct Header {
  uint32_t dim = 0;
  uint32_t reserved = 0;
  uint64_t rows = 0;
  uint64_t nonzeros = 0;
  uint64_t header_checksum = 0;
};
static_assert(sizeof(Header) == 32, "the header is written as it is laid out in memory");

struct Layout {
  uint64_t frequencies = 0, ids = 0, offsets = 0, entries = 0, end = 0;
};

Layout layout_of(const Header& header) {
  Layout layout;
  layout.frequencies = section_start(kPreambleSize + sizeof(Header));
  layout.ids = section_start(layout.frequencies + uint64_t{header.dim} * sizeof(int64_t));
  layout.offsets = section_start(layout.ids + header.rows * sizeof(int64_t));
  layout.entries = section_start(layout.offsets + (header.rows + 1) * sizeof(uint64_t));
  layout.end = section_start(layout.entries + header.nonzeros * 8);
  return layout;
}

bool valid(const Header& header) {
  return header.dim > 0 && header.dim <= (1u << 24) && header.rows <= (uint64_t{1} << 36) &&
         header.nonzeros <= header.rows * header.dim;
}

uint64_t header_checksum(const Header& header, const int64_t* frequencies, const int64_t* ids,
                         const uint64_t* offsets) {
  uint64_t hash = checksum_of_bytes(&header, offsetof(Header, header_checksum), 8);
  hash = checksum_of_bytes(frequencies, uint64_t{header.dim} * sizeof(int64_t), 8, hash);
  hash = checksum_of_bytes(ids, header.rows * sizeof(int64_t), 8, hash);
  return checksum_of_bytes(offsets, (header.rows + 1) * sizeof(uint64_t), 8, hash);
}

// Ids strictly ascending, offsets ascending from 0 to the non-zeros, no row longer than the dimension.
bool consistent(const Header& header, const int64_t* ids, const uint64_t* offsets) {
  if (offsets[0] != 0 || offsets[header.rows] != header.nonzeros) return false;
  for (uint64_t r = 0; r < header.rows; ++r) {
    if (offsets[r + 1] < offsets[r] || offsets[r + 1] - offsets[r] > header.dim) return false;
    if (r > 0 && ids[r] <= ids[r - 1]) return false;
  }
  return true;
}

}  // namespace

SparseVectors::SparseVectors(int dim) : dim_(dim) {
  if (dim < 1) throw Error("sparse vectors need a positive dimension");
  document_frequency_.assign(static_cast<size_t>(dim), 0);
}

void SparseVectors::own() {
  if (!mapped_) return;
  std::vector<Entry> buffer;
  std::unordered_map<int64_t, std::vector<Entry>> rows;
  rows.reserve(static_cast<size_t>(mapped_rows_));
  for (int64_t r = 0; r < mapped_rows_; ++r) {
    const Row row = this->row(mapped_ids_[r], buffer);
    rows[mapped_ids_[r]] = std::vector<Entry>(row.entries, row.entries + row.size);
  }
  rows_ = std::move(rows);
  mapped_.reset();
  mapped_ids_ = nullptr;
  mapped_offsets_ = nullptr;
  mapped_entries_offset_ = 0;
  mapped_rows_ = 0;
  mapped_consecutive_ = false;
}

void SparseVectors::add(int64_t id, const float* dense) {
  own();
  remove(id);
  std::vector<Entry> row;
  for (int i = 0; i < dim_; ++i) {
    if (dense[i] != 0.0f) {
      row.push_back({static_cast<uint32_t>(i), dense[i]});
      ++document_frequency_[static_cast<size_t>(i)];
    }
  }
  rows_[id] = std::move(row);
}

bool SparseVectors::remove(int64_t id) {
  own();
  auto it = rows_.find(id);
  if (it == rows_.end()) return false;
  for (const auto& entry : it->second) --document_frequency_[entry.index];
  rows_.erase(it);
  return true;
}

bool SparseVectors::locate(int64_t id, uint64_t& first, uint64_t& size) const {
  size_t r = 0;
  if (mapped_consecutive_) {  // ids first .. first + rows - 1: the row is computed
    if (mapped_rows_ == 0 || id < mapped_ids_[0] || id > mapped_ids_[mapped_rows_ - 1]) return false;
    r = static_cast<size_t>(id - mapped_ids_[0]);
  } else {
    const int64_t* end = mapped_ids_ + mapped_rows_;
    const int64_t* found = std::lower_bound(mapped_ids_, end, id);
    if (found == end || *found != id) return false;
    r = static_cast<size_t>(found - mapped_ids_);
  }
  first = mapped_offsets_[r];
  size = mapped_offsets_[r + 1] - first;
  return true;
}

SparseVectors::Row SparseVectors::row(int64_t id, std::vector<Entry>& buffer) const {
  if (mapped_) {
    uint64_t first = 0, size = 0;
    if (!locate(id, first, size)) throw Error("sparse vectors: unknown id " + std::to_string(id));
    buffer.resize(static_cast<size_t>(size));
    mapped_->read_at(mapped_entries_offset_ + first * sizeof(Entry), buffer.data(), size * sizeof(Entry));
    check(buffer.data(), buffer.size(), id);
    return {buffer.data(), buffer.size()};
  }
  auto it = rows_.find(id);
  if (it == rows_.end()) throw Error("sparse vectors: unknown id " + std::to_string(id));
  return {it->second.data(), it->second.size()};
}

void SparseVectors::check(const Entry* entries, size_t size, int64_t id) const {
  uint32_t largest = 0;  // one pass without a branch per entry, which the compiler vectorizes
  for (size_t i = 0; i < size; ++i) largest = std::max(largest, entries[i].index);
  if (size > 0 && largest >= static_cast<uint32_t>(dim_))
    throw Error("sparse vectors: row " + std::to_string(id) + " is corrupt");
}

bool SparseVectors::contains(int64_t id) const {
  uint64_t first = 0, size = 0;
  return mapped_ ? locate(id, first, size) : rows_.count(id) > 0;
}

int64_t SparseVectors::size() const { return mapped_ ? mapped_rows_ : static_cast<int64_t>(rows_.size()); }

std::vector<int64_t> SparseVectors::ids() const {
  if (mapped_) return std::vector<int64_t>(mapped_ids_, mapped_ids_ + mapped_rows_);
  std::vector<int64_t> out;
  out.reserve(rows_.size());
  for (const auto& [id, _] : rows_) out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

size_t SparseVectors::memory_bytes() const {
  size_t bytes = document_frequency_.size() * sizeof(int64_t);
  for (const auto& [_, row] : rows_) bytes += sizeof(int64_t) + sizeof(row) + row.size() * sizeof(row[0]);
  return bytes;
}

std::vector<SparseVectors::Entry>& SparseVectors::scratch() {
  thread_local std::vector<Entry> buffer;
  return buffer;
}

std::vector<float> SparseVectors::dense(int64_t id) const {
  const Row r = row(id, scratch());
  std::vector<float> out(static_cast<size_t>(dim_), 0.0f);
  for (size_t i = 0; i < r.size; ++i) out[r.entries[i].index] = r.entries[i].value;
  return out;
}

// Owned rows hold indices below dim() by construction, read ones are checked by row(): no check per entry here.
float SparseVectors::dot(int64_t id, const float* query) const {
  // Four running sums: one sum would wait on each previous multiply-add, four keep the gathers overlapping.
  const Row r = row(id, scratch());
  float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  size_t i = 0;
  for (; i + 4 <= r.size; i += 4)
    for (size_t j = 0; j < 4; ++j) sums[j] += r.entries[i + j].value * query[r.entries[i + j].index];
  for (; i < r.size; ++i) sums[0] += r.entries[i].value * query[r.entries[i].index];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

namespace {

// The scalar pass: the reference, and the path of CPUs without AVX-512.
template <typename Entry>
SparseVectors::RowPass row_pass_scalar(const Entry* entries, size_t size, const float* query, const float* weights,
                                       const float* mass) {
  float dots[2] = {0.0f, 0.0f}, squares[2] = {0.0f, 0.0f}, covered = 0.0f;
  for (size_t i = 0; i < size; ++i) {
    const Entry& e = entries[i];
    const float weighted = e.value * weights[e.index];
    dots[i & 1] += e.value * query[e.index];
    squares[i & 1] += weighted * weighted;
  }
  if (mass)
    for (size_t i = 0; i < size; ++i) covered += mass[entries[i].index];
  return {dots[0] + dots[1], std::sqrt(squares[0] + squares[1]), covered};
}

#define RELMEM_SPARSE_TARGET __attribute__((target("avx512f")))

RELMEM_SPARSE_TARGET float sum_lanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  return sum;
}

// Sixteen entries at a time: two loads of (index, value) pairs, deinterleaved by two permutes, and the query's,
// weights' and mass's values at the indices gathered. About twice the scalar loop's pace, which waits on a load per
// entry and quantity. The sums round differently from the scalar loop's (in the last bits).
template <typename Entry>
RELMEM_SPARSE_TARGET SparseVectors::RowPass row_pass_avx512(const Entry* entries, size_t size, const float* query,
                                                            const float* weights, const float* mass) {
  static_assert(sizeof(Entry) == 8, "an entry is a (u32 index, f32 value) pair");
  const __m512i indices_of = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i values_of = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 zero = _mm512_setzero_ps();
  __m512 dots = zero, squares = zero, covered = zero;
  const auto* words = reinterpret_cast<const int32_t*>(entries);
  for (size_t i = 0; i < size; i += 16) {
    const size_t left = size - i;
    const auto low_bits = [](size_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1); };
    const __mmask16 mask = low_bits(left);
    const __m512i first = _mm512_maskz_loadu_epi32(low_bits(2 * left), words + 2 * i);
    const __m512i second = _mm512_maskz_loadu_epi32(left > 8 ? low_bits(2 * (left - 8)) : 0, words + 2 * i + 16);
    const __m512i index = _mm512_permutex2var_epi32(first, indices_of, second);
    const __m512 value = _mm512_castsi512_ps(_mm512_permutex2var_epi32(first, values_of, second));
    dots = _mm512_fmadd_ps(value, _mm512_mask_i32gather_ps(zero, mask, index, query, 4), dots);
    const __m512 weighted = _mm512_mul_ps(value, _mm512_mask_i32gather_ps(zero, mask, index, weights, 4));
    squares = _mm512_fmadd_ps(weighted, weighted, squares);
    if (mass) covered = _mm512_add_ps(covered, _mm512_mask_i32gather_ps(zero, mask, index, mass, 4));
  }
  return {sum_lanes(dots), std::sqrt(sum_lanes(squares)), sum_lanes(covered)};
}

template <typename Entry>
SparseVectors::RowPass row_pass(const Entry* entries, size_t size, const float* query, const float* weights,
                                const float* mass) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512 ? row_pass_avx512(entries, size, query, weights, mass)
                : row_pass_scalar(entries, size, query, weights, mass);
}

}  // namespace

SparseVectors::RowPass SparseVectors::pass(int64_t id, const float* query, const float* weights,
                                           const float* mass) const {
  const Row r = row(id, scratch());
  return row_pass(r.entries, r.size, query, weights, mass);
}

void SparseVectors::passes(int64_t first, int64_t count, const float* query, const float* weights, const float* mass,
                           RowPass* out) const {
  if (count <= 0) return;
  uint64_t begin = 0, size = 0, last = 0, last_size = 0;
  if (!mapped_ || !mapped_consecutive_ || !locate(first, begin, size) || !locate(first + count - 1, last, last_size)) {
    for (int64_t i = 0; i < count; ++i) out[i] = pass(first + i, query, weights, mass);
    return;
  }
  // Consecutive ids are consecutive rows of the file: one read for all of them.
  std::vector<Entry>& buffer = scratch();
  buffer.resize(static_cast<size_t>(last + last_size - begin));
  mapped_->read_at(mapped_entries_offset_ + begin * sizeof(Entry), buffer.data(), buffer.size() * sizeof(Entry));
  check(buffer.data(), buffer.size(), first);
  const auto r = static_cast<size_t>(first - mapped_ids_[0]);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t from = mapped_offsets_[r + static_cast<size_t>(i)], to = mapped_offsets_[r + static_cast<size_t>(i) + 1];
    out[i] = row_pass(buffer.data() + (from - begin), static_cast<size_t>(to - from), query, weights, mass);
  }
}

void SparseVectors::save(const std::string& path) const {
  const std::vector<int64_t> ids = this->ids();  // ascending: the same memory always writes the same bytes
  std::vector<uint64_t> offsets(ids.size() + 1, 0);
  std::vector<Entry> buffer;
  for (size_t r = 0; r < ids.size(); ++r) offsets[r + 1] = offsets[r] + row(ids[r], buffer).size;
  Header header;
  header.dim = static_cast<uint32_t>(dim_);
  header.rows = ids.size();
  header.nonzeros = offsets.back();
  header.header_checksum = header_checksum(header, document_frequency_.data(), ids.data(), offsets.data());

  ChecksummedFileWriter file(kSparseVectorFile, path);
  uint64_t offset = kPreambleSize;
  auto section = [&](const void* data, uint64_t size) { write_section(file, offset, data, size); };
  section(&header, sizeof header);
  section(document_frequency_.data(), document_frequency_.size() * sizeof(int64_t));
  section(ids.data(), ids.size() * sizeof(int64_t));
  section(offsets.data(), offsets.size() * sizeof(uint64_t));
  static_assert(sizeof(Entry) == 8, "an entry is the file's (u32, f32) pair");
  for (int64_t id : ids) {
    const Row r = row(id, buffer);
    file.write(r.entries, r.size * sizeof(Entry));
    offset += r.size * sizeof(Entry);
  }
  pad_to_section(file, offset);
  file.commit();
}

SparseVectors SparseVectors::load(const std::string& path, bool mmap) {
  if (mmap && worth_mapping(path)) {
    auto file = std::make_shared<MappedFile>(path);
    const uint8_t* data = file->data();
    auto error = [&](const std::string& problem) { return Error("sparse vector file " + path + " " + problem); };
    if (std::memcmp(data, "RMSV", 4) != 0) throw Error(path + " is not a relmem sparse vector file (bad magic)");
    uint32_t version = 0;
    std::memcpy(&version, data + 4, sizeof version);
    if (version == 2) {
      if (file->size() < kPreambleSize + sizeof(Header)) throw error("is truncated");
      Header header;
      std::memcpy(&header, data + kPreambleSize, sizeof header);
      if (!valid(header)) throw error("has an invalid header");
      const Layout layout = layout_of(header);
      if (file->size() != layout.end + sizeof(uint64_t)) throw error("is truncated or has trailing bytes");
      const auto* frequencies = reinterpret_cast<const int64_t*>(data + layout.frequencies);
      const auto* ids = reinterpret_cast<const int64_t*>(data + layout.ids);
      const auto* offsets = reinterpret_cast<const uint64_t*>(data + layout.offsets);
      if (header_checksum(header, frequencies, ids, offsets) != header.header_checksum)
        throw error("is corrupt (checksum mismatch)");
      if (!consistent(header, ids, offsets)) throw error("is malformed");
      SparseVectors vectors(static_cast<int>(header.dim));
      vectors.document_frequency_.assign(frequencies, frequencies + header.dim);
      vectors.mapped_ids_ = ids;
      vectors.mapped_offsets_ = offsets;
      vectors.mapped_entries_offset_ = layout.entries;
      vectors.mapped_rows_ = static_cast<int64_t>(header.rows);
      // Ascending and distinct, so consecutive exactly when the last is rows - 1 past the first.
      vectors.mapped_consecutive_ =
          header.rows == 0 || static_cast<uint64_t>(ids[header.rows - 1]) - static_cast<uint64_t>(ids[0]) == header.rows - 1;
      vectors.mapped_ = std::move(file);
      return vectors;
    }
  }
  ChecksummedFileReader file(kSparseVectorFile, path);
  if (file.version() == 1) {
    const auto dim = file.read_value<uint32_t>();
    SparseVectors vectors(static_cast<int>(dim));
    const auto count = file.read_value<uint64_t>();
    for (uint64_t r = 0; r < count; ++r) {
      const auto id = file.read_value<int64_t>();
      const auto nnz = file.read_value<uint32_t>();
      if (nnz > dim) throw file.error("is malformed");
      std::vector<Entry> row = file.read_array<Entry>(nnz);  // a row at a time: millions of entries load
      for (const auto& entry : row) {
        if (entry.index >= dim) throw file.error("is malformed");
        ++vectors.document_frequency_[entry.index];
      }
      if (vectors.rows_.count(id)) throw file.error("repeats id " + std::to_string(id));
      vectors.rows_[id] = std::move(row);
    }
    file.finish();
    return vectors;
  }
  uint64_t offset = kPreambleSize;
  const auto header = file.read_value<Header>();
  offset += sizeof header;
  skip_to_section(file, offset);
  if (!valid(header)) throw file.error("has an invalid header");
  auto read_section = [&](auto type, uint64_t count) {
    auto values = file.read_array<decltype(type)>(count);
    offset += count * sizeof(decltype(type));
    skip_to_section(file, offset);
    return values;
  };
  const std::vector<int64_t> frequencies = read_section(int64_t{}, header.dim);
  const std::vector<int64_t> ids = read_section(int64_t{}, header.rows);
  const std::vector<uint64_t> offsets = read_section(uint64_t{}, header.rows + 1);
  if (header_checksum(header, frequencies.data(), ids.data(), offsets.data()) != header.header_checksum)
    throw file.error("is corrupt (header checksum mismatch)");
  if (!consistent(header, ids.data(), offsets.data())) throw file.error("is malformed");
  SparseVectors vectors(static_cast<int>(header.dim));
  vectors.rows_.reserve(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    std::vector<Entry> row = file.read_array<Entry>(offsets[r + 1] - offsets[r]);
    for (const auto& entry : row) {
      if (entry.index >= header.dim) throw file.error("is malformed");
      ++vectors.document_frequency_[entry.index];
    }
    vectors.rows_[ids[r]] = std::move(row);
  }
  offset += header.nonzeros * sizeof(Entry);
  skip_to_section(file, offset);
  file.finish();
  if (vectors.document_frequency_ != frequencies) throw file.error("is malformed (document frequencies)");
  return vectors;
}

}  // namespace relmem
