#include "relmem/memories/sparse_vectors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "relmem/common.hpp"

namespace relmem {
namespace {

constexpr char kMagic[4] = {'R', 'M', 'S', 'V'};
constexpr uint32_t kVersion = 1;

uint64_t fnv1a(const char* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<uint8_t>(data[i])) * 0x100000001b3ULL;
  return hash;
}

template <typename T>
void append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

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
  std::string bytes(kMagic, sizeof kMagic);
  append(bytes, kVersion);
  append(bytes, static_cast<uint32_t>(dim_));
  append(bytes, static_cast<uint64_t>(ids.size()));
  for (int64_t id : ids) {
    const auto& row = rows_.at(id);
    append(bytes, id);
    append(bytes, static_cast<uint32_t>(row.size()));
    for (const auto& [index, value] : row) {
      append(bytes, index);
      append(bytes, value);
    }
  }
  append(bytes, fnv1a(bytes.data(), bytes.size()));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write sparse vector file " + path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("failed writing sparse vector file " + path);
}

SparseVectors SparseVectors::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open sparse vector file " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t offset = 0;
  auto take = [&](void* out, size_t size) {
    if (size > bytes.size() - offset) throw Error("sparse vector file " + path + " is truncated");
    std::memcpy(out, bytes.data() + offset, size);
    offset += size;
  };
  char magic[4];
  if (bytes.size() < sizeof magic + 8) throw Error(path + " is not a relmem sparse vector file");
  take(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) throw Error(path + " is not a relmem sparse vector file");
  uint32_t version, dim;
  take(&version, sizeof version);
  if (version != kVersion) {
    throw Error("sparse vector file " + path + " has version " + std::to_string(version) + "; this relmem reads " +
                std::to_string(kVersion));
  }
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
  if (fnv1a(bytes.data(), bytes.size() - sizeof stored) != stored) {
    throw Error("sparse vector file " + path + " is corrupt (checksum mismatch)");
  }
  take(&dim, sizeof dim);
  SparseVectors vectors(static_cast<int>(dim));
  uint64_t count;
  take(&count, sizeof count);
  for (uint64_t r = 0; r < count; ++r) {
    int64_t id;
    uint32_t nnz;
    take(&id, sizeof id);
    take(&nnz, sizeof nnz);
    if (nnz > dim) throw Error("sparse vector file " + path + " is malformed");
    std::vector<std::pair<uint32_t, float>> row(nnz);
    for (auto& [index, value] : row) {
      take(&index, sizeof index);
      take(&value, sizeof value);
      if (index >= dim) throw Error("sparse vector file " + path + " is malformed");
      ++vectors.document_frequency_[index];
    }
    if (vectors.rows_.count(id)) throw Error("sparse vector file " + path + " repeats id " + std::to_string(id));
    vectors.rows_[id] = std::move(row);
  }
  if (offset + sizeof stored != bytes.size()) throw Error("sparse vector file " + path + " has trailing bytes");
  return vectors;
}

}  // namespace relmem
