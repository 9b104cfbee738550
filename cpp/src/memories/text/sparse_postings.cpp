#include "relmem/memories/text/sparse_postings.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "relmem/common.hpp"

namespace relmem {

SparsePostings::SparsePostings(int dim, const std::vector<std::pair<const SparseVectors*, int64_t>>& rows,
                               const std::vector<float>& weights)
    : offsets_(static_cast<size_t>(std::max(dim, 0)) + 1, 0), norms_(rows.size(), 0.0f) {
  if (dim < 1 || weights.size() != static_cast<size_t>(dim))
    throw Error("sparse postings need a positive dimension and one weight per dimension");
  for (const auto& [vectors, id] : rows)
    if (vectors->dim() != dim) throw Error("sparse postings: rows of another dimension");
  // Two passes: count each dimension's postings, then place them (slots ascending within a dimension).
  for (const auto& [vectors, id] : rows)
    vectors->for_each_nonzero(id, [&](uint32_t index, float) { ++offsets_[index + 1]; });
  for (size_t j = 0; j < static_cast<size_t>(dim); ++j) offsets_[j + 1] += offsets_[j];
  if (offsets_.back() > std::numeric_limits<uint32_t>::max() - 1u)
    throw Error("sparse postings: too many non-zeros");
  slots_.resize(offsets_.back());
  values_.resize(offsets_.back());
  std::vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    double square = 0.0;
    rows[slot].first->for_each_nonzero(rows[slot].second, [&](uint32_t index, float value) {
      const uint32_t at = next[index]++;
      slots_[at] = static_cast<uint32_t>(slot);
      values_[at] = value;
      const double weighted = static_cast<double>(value) * weights[index];
      square += weighted * weighted;
    });
    norms_[slot] = static_cast<float>(std::sqrt(square));
  }
}

std::vector<SparseVectors::RowPass> SparsePostings::passes(const float* query, const float* mass) const {
  std::vector<SparseVectors::RowPass> out(norms_.size());
  for (size_t slot = 0; slot < norms_.size(); ++slot) out[slot].weighted_norm = norms_[slot];
  for (size_t j = 0; j + 1 < offsets_.size(); ++j) {
    const float q = query[j], m = mass[j];
    if (q == 0.0f && m == 0.0f) continue;
    for (uint32_t p = offsets_[j]; p < offsets_[j + 1]; ++p) {
      SparseVectors::RowPass& row = out[slots_[p]];
      row.dot += values_[p] * q;
      row.covered += m;
    }
  }
  return out;
}

size_t SparsePostings::memory_bytes() const {
  return offsets_.size() * sizeof(uint32_t) + slots_.size() * sizeof(uint32_t) + values_.size() * sizeof(float) +
         norms_.size() * sizeof(float);
}

}  // namespace relmem
