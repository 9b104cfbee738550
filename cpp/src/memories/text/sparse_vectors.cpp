#include "relmem/memories/text/sparse_vectors.hpp"

#include <algorithm>
#include <cmath>

#include "../../common/checksummed_file.hpp"
#include "relmem/common.hpp"

namespace relmem {
namespace {

constexpr ChecksummedFormat kSparseVectorFile{"sparse vector", "RMSV", 1, 1, /*checksum_word_size=*/1};

}  // namespace

SparseVectors::SparseVectors(int dim) : dim_(dim) {
  if (dim < 1) throw Error("sparse vectors need a positive dimension");
  document_frequency_.assign(static_cast<size_t>(dim), 0);
}

void SparseVectors::add(int64_t id, const float* dense) {
  remove(id);
  std::vector<std::pair<uint32_t, float>> row;
  for (int i = 0; i < dim_; ++i) {
    if (dense[i] != 0.0f) {
      row.emplace_back(static_cast<uint32_t>(i), dense[i]);
      ++document_frequency_[static_cast<size_t>(i)];
    }
  }
  rows_[id] = std::move(row);
}

bool SparseVectors::remove(int64_t id) {
  auto it = rows_.find(id);
  if (it == rows_.end()) return false;
  for (const auto& entry : it->second) --document_frequency_[entry.first];
  rows_.erase(it);
  return true;
}

float SparseVectors::covered(int64_t id, const float* query) const {
  auto it = rows_.find(id);
  if (it == rows_.end()) throw Error("sparse vectors: unknown id " + std::to_string(id));
  float sum = 0.0f;
  for (const auto& [index, _] : it->second) sum += query[index];
  return sum;
}

float SparseVectors::weighted_norm(int64_t id, const std::vector<float>& weights) const {
  auto it = rows_.find(id);
  if (it == rows_.end()) throw Error("sparse vectors: unknown id " + std::to_string(id));
  float sum = 0.0f;
  for (const auto& [index, value] : it->second) sum += (value * weights[index]) * (value * weights[index]);
  return std::sqrt(sum);
}

std::vector<int64_t> SparseVectors::ids() const {
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

float SparseVectors::dot(int64_t id, const float* query) const {
  auto it = rows_.find(id);
  if (it == rows_.end()) throw Error("sparse vectors: unknown id " + std::to_string(id));
  // Four running sums: one sum would wait on each previous multiply-add, four keep the gathers overlapping.
  const auto& row = it->second;
  float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  size_t i = 0;
  for (; i + 4 <= row.size(); i += 4)
    for (size_t j = 0; j < 4; ++j) sums[j] += row[i + j].second * query[row[i + j].first];
  for (; i < row.size(); ++i) sums[0] += row[i].second * query[row[i].first];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

void SparseVectors::save(const std::string& path) const {
  const std::vector<int64_t> ids = this->ids();  // sorted: the same memory always writes the same bytes
  ChecksummedFileWriter file(kSparseVectorFile, path);
  file.write_values(static_cast<uint32_t>(dim_), static_cast<uint64_t>(ids.size()));
  for (int64_t id : ids) {
    const auto& row = rows_.at(id);
    file.write_values(id, static_cast<uint32_t>(row.size()));
    static_assert(sizeof row[0] == sizeof(uint32_t) + sizeof(float), "a row is the file's (u32, f32) pairs");
    file.write(row.data(), row.size() * sizeof row[0]);
  }
  file.commit();
}

SparseVectors SparseVectors::load(const std::string& path) {
  ChecksummedFileReader file(kSparseVectorFile, path);
  const auto dim = file.read_value<uint32_t>();
  SparseVectors vectors(static_cast<int>(dim));
  const auto count = file.read_value<uint64_t>();
  for (uint64_t r = 0; r < count; ++r) {
    const auto id = file.read_value<int64_t>();
    const auto nnz = file.read_value<uint32_t>();
    if (nnz > dim) throw file.error("is malformed");
    struct Entry {
      uint32_t index;
      float value;
    };
    std::vector<std::pair<uint32_t, float>> row;
    row.reserve(nnz);
    for (const auto& [index, value] : file.read_array<Entry>(nnz)) {  // a row at a time: millions of entries load
      if (index >= dim) throw file.error("is malformed");
      ++vectors.document_frequency_[index];
      row.emplace_back(index, value);
    }
    if (vectors.rows_.count(id)) throw file.error("repeats id " + std::to_string(id));
    vectors.rows_[id] = std::move(row);
  }
  file.finish();
  return vectors;
}

}  // namespace relmem
