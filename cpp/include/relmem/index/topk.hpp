#pragma once
// Partial selection of the k best (score, id) pairs; ties broken by the smaller id so results are deterministic.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace relmem {

struct Scored {
  float score;
  int64_t id;
};

inline bool better(const Scored& a, const Scored& b) {
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}

// Keeps the best k of `candidates` in place, sorted best first. The comparison is a lambda, not `better` itself:
// a function pointer is called through for every comparison, a lambda is inlined.
inline void keep_top_k(std::vector<Scored>& candidates, size_t k) {
  const auto before = [](const Scored& a, const Scored& b) { return better(a, b); };
  if (candidates.size() > k) {
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k), candidates.end(), before);
    candidates.resize(k);
  }
  std::sort(candidates.begin(), candidates.end(), before);
}

}  // namespace relmem
