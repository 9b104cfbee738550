#pragma once
// Where a candidate database stands among the other candidates of the same question (the pool the selection memory
// scores): its rank under each similarity channel, its margin over the best other candidate, and whether it alone
// stores a value the question names. The untrained score weighs each channel linearly; the relevance model reads
// these too, so it can tell "first under four channels" from "close second under all" (relevance_model.hpp).
// Computed by pool_standings from the candidates' raw similarities, for serving and training alike.
#include <vector>

#include "relmem/memories/relevance/similarity_fusion.hpp"

namespace relmem {

struct PoolStanding {
  // 1 / rank among the candidates (ties share the better rank) under the untrained score (mean fusion) and under
  // card, table, lexical card, lexical table, column, word-column, lexical coverage and table word-column.
  static constexpr int kChannels = 9;
  float reciprocal_rank[kChannels] = {};
  // The untrained score minus the best other candidate's: positive for the top candidate only.
  float margin = 0.0f;
  // With stored-value evidence (raw.value > 0): 1 / the number of candidates that have some; else 0.
  float value_exclusivity = 0.0f;
};

// One per candidate, in order. `lexical`: whether the memory has a lexical channel (as untrained_score takes it).
std::vector<PoolStanding> pool_standings(const std::vector<RawSimilarities>& candidates, bool lexical);

}  // namespace relmem
