#include "relmem/memories/relevance/pool_standing.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace relmem {
namespace {

// Writes 1 / rank of every value (rank 1 + the number of strictly greater values) into out[i].reciprocal_rank[c].
void rank_channel(const std::vector<float>& values, int channel, std::vector<PoolStanding>& out) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] > values[b]; });
  size_t rank = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && values[order[i]] < values[order[i - 1]]) rank = i + 1;
    out[order[i]].reciprocal_rank[channel] = 1.0f / static_cast<float>(rank);
  }
}

}  // namespace

std::vector<PoolStanding> pool_standings(const std::vector<RawSimilarities>& candidates, bool lexical) {
  const size_t n = candidates.size();
  std::vector<PoolStanding> out(n);
  if (n == 0) return out;
  std::vector<float> untrained(n);
  for (size_t i = 0; i < n; ++i) untrained[i] = untrained_score(SimilarityFusion::Mean, candidates[i], lexical);
  const std::vector<float RawSimilarities::*> channels = {
      &RawSimilarities::card,   &RawSimilarities::table,       &RawSimilarities::lexical_card,
      &RawSimilarities::lexical_table, &RawSimilarities::column, &RawSimilarities::word_column,
      &RawSimilarities::lexical_table_coverage, &RawSimilarities::table_word_column};
  rank_channel(untrained, 0, out);
  std::vector<float> values(n);
  for (size_t c = 0; c < channels.size(); ++c) {
    for (size_t i = 0; i < n; ++i) values[i] = candidates[i].*channels[c];
    rank_channel(values, static_cast<int>(c) + 1, out);
  }
  // The best and second best untrained scores: each candidate's margin is over the best of the others.
  float first = -std::numeric_limits<float>::infinity(), second = first;
  size_t first_index = 0;
  for (size_t i = 0; i < n; ++i) {
    if (untrained[i] > first) {
      second = first;
      first = untrained[i];
      first_index = i;
    } else if (untrained[i] > second) {
      second = untrained[i];
    }
  }
  const auto with_values = static_cast<float>(
      std::count_if(candidates.begin(), candidates.end(), [](const RawSimilarities& r) { return r.value > 0.0f; }));
  for (size_t i = 0; i < n; ++i) {
    const float best_other = i == first_index ? second : first;
    out[i].margin = n == 1 ? 0.0f : untrained[i] - best_other;
    out[i].value_exclusivity = candidates[i].value > 0.0f ? 1.0f / with_values : 0.0f;
  }
  return out;
}

}  // namespace relmem
