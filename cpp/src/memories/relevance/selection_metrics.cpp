#include "relmem/memories/relevance/selection_metrics.hpp"

#include <algorithm>
#include <string>

#include "relmem/common.hpp"

namespace relmem {
namespace {

void check_sizes(size_t found, size_t gold) {
  if (found != gold) {
    throw Error("selection metrics: " + std::to_string(found) + " results for " + std::to_string(gold) + " questions");
  }
}

bool among(const std::vector<int>& ids, size_t count, int id) {
  const auto end = ids.begin() + static_cast<int64_t>(std::min(count, ids.size()));
  return std::find(ids.begin(), end, id) != end;
}

}  // namespace

double RankingMetrics::recall_at(int k) const {
  for (size_t i = 0; i < ks.size(); ++i)
    if (ks[i] == k) return recall[i];
  throw Error("recall@" + std::to_string(k) + " was not measured");
}

RankingMetrics ranking_metrics(const std::vector<std::vector<int>>& ranked, const std::vector<std::vector<int>>& gold,
                               const std::vector<int>& ks) {
  check_sizes(ranked.size(), gold.size());
  RankingMetrics m;
  m.ks = ks;
  m.recall.assign(ks.size(), 0.0);
  m.questions = static_cast<int64_t>(gold.size());
  if (gold.empty()) return m;
  for (size_t q = 0; q < gold.size(); ++q) {
    if (gold[q].empty()) throw Error("selection metrics: question " + std::to_string(q) + " has no database");
    for (size_t i = 0; i < ks.size(); ++i) {
      const auto k = static_cast<size_t>(std::max(ks[i], 0));
      const auto hits = std::count_if(gold[q].begin(), gold[q].end(), [&](int db) { return among(ranked[q], k, db); });
      m.recall[i] += static_cast<double>(hits) / static_cast<double>(gold[q].size());
    }
    m.all_in_top5 += std::all_of(gold[q].begin(), gold[q].end(), [&](int db) { return among(ranked[q], 5, db); });
  }
  for (double& r : m.recall) r /= static_cast<double>(m.questions);
  m.all_in_top5 /= static_cast<double>(m.questions);
  return m;
}

SetMetrics set_metrics(const std::vector<std::vector<int>>& selected, const std::vector<std::vector<int>>& gold) {
  check_sizes(selected.size(), gold.size());
  int64_t chosen = 0, wanted = 0, hits = 0;
  for (size_t q = 0; q < gold.size(); ++q) {
    chosen += static_cast<int64_t>(selected[q].size());
    wanted += static_cast<int64_t>(gold[q].size());
    for (int db : selected[q]) hits += std::find(gold[q].begin(), gold[q].end(), db) != gold[q].end();
  }
  return micro_averaged(hits, chosen, wanted, static_cast<int64_t>(gold.size()));
}

}  // namespace relmem
