// A candidate's standing among the question's other candidates: reciprocal ranks per channel (ties share the better
// rank), the untrained margin over the best other candidate, and value exclusivity.
#include <gtest/gtest.h>

#include "relmem/memories/relevance/pool_standing.hpp"

using namespace relmem;

namespace {

RawSimilarities raw_with(float card, float table, float value) {
  RawSimilarities raw;
  raw.card = card;
  raw.table = table;
  raw.value = value;
  return raw;
}

}  // namespace

TEST(PoolStanding, RanksMarginsAndExclusivity) {
  // Card: 0.9, 0.5, 0.9 (a tie for first), 0.1; table: ascending; stored values in the second and fourth.
  const std::vector<RawSimilarities> pool = {raw_with(0.9f, 0.1f, 0.0f), raw_with(0.5f, 0.2f, 2.0f),
                                             raw_with(0.9f, 0.3f, 0.0f), raw_with(0.1f, 0.4f, 1.0f)};
  const auto standings = pool_standings(pool, /*lexical=*/true);
  ASSERT_EQ(standings.size(), 4u);
  constexpr int card = 1, table = 2;
  EXPECT_FLOAT_EQ(standings[0].reciprocal_rank[card], 1.0f);
  EXPECT_FLOAT_EQ(standings[2].reciprocal_rank[card], 1.0f);
  EXPECT_FLOAT_EQ(standings[1].reciprocal_rank[card], 1.0f / 3.0f);
  EXPECT_FLOAT_EQ(standings[3].reciprocal_rank[card], 0.25f);
  EXPECT_FLOAT_EQ(standings[3].reciprocal_rank[table], 1.0f);
  EXPECT_FLOAT_EQ(standings[0].reciprocal_rank[table], 0.25f);
  // Channels every candidate ties on (zero here) rank all first.
  EXPECT_FLOAT_EQ(standings[3].reciprocal_rank[PoolStanding::kChannels - 1], 1.0f);

  std::vector<float> untrained;
  for (const auto& raw : pool) untrained.push_back(untrained_score(SimilarityFusion::Mean, raw, true));
  const size_t top = static_cast<size_t>(std::max_element(untrained.begin(), untrained.end()) - untrained.begin());
  EXPECT_FLOAT_EQ(standings[top].reciprocal_rank[0], 1.0f);
  EXPECT_GT(standings[top].margin, 0.0f);
  for (size_t i = 0; i < pool.size(); ++i) {
    if (i == top) continue;
    EXPECT_FLOAT_EQ(standings[i].margin, untrained[i] - untrained[top]);
    EXPECT_LT(standings[i].reciprocal_rank[0], 1.0f);
  }
  EXPECT_FLOAT_EQ(standings[0].value_exclusivity, 0.0f);
  EXPECT_FLOAT_EQ(standings[1].value_exclusivity, 0.5f);
  EXPECT_FLOAT_EQ(standings[3].value_exclusivity, 0.5f);
}

TEST(PoolStanding, SingleCandidateAndEmptyPool) {
  EXPECT_TRUE(pool_standings({}, true).empty());
  const auto one = pool_standings({raw_with(0.4f, 0.3f, 1.5f)}, false);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FLOAT_EQ(one[0].margin, 0.0f);
  EXPECT_FLOAT_EQ(one[0].value_exclusivity, 1.0f);
  for (float r : one[0].reciprocal_rank) EXPECT_FLOAT_EQ(r, 1.0f);
}
