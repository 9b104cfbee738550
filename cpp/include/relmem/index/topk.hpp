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

// The comparison is a lambda, not `better` itself: a function pointer is called through for every comparison, a
// lambda is inlined.
inline constexpr auto kBetter = [](const Scored& a, const Scored& b) { return better(a, b); };

// Keeps the best k (k >= 1) of `candidates` in place, in no order except that the k-th best comes last (when there
// were more than k): for a running top-k, whose floor is then candidates.back().score.
inline void keep_best_k(std::vector<Scored>& candidates, size_t k) {
  if (candidates.size() <= k) return;
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k - 1), candidates.end(), kBetter);
  candidates.resize(k);
}

// Keeps the best k of `candidates` in place, sorted best first.
inline void keep_top_k(std::vector<Scored>& candidates, size_t k) {
  if (k == 0) return candidates.clear();
  keep_best_k(candidates, k);
  std::sort(candidates.begin(), candidates.end(), kBetter);
}

}  // namespace relmem
