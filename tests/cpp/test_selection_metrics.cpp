// Ranking and set metrics of labelled questions (the benchmark's and the trainer's one definition).
#include <gtest/gtest.h>

#include "relmem/common.hpp"
#include "relmem/memories/relevance/selection_metrics.hpp"

using namespace relmem;

TEST(SelectionMetrics, RecallCountsTheShareOfGoldDatabasesInTheTopK) {
  // Question 0: gold 7 ranked first. Question 1: gold {1, 2}, 1 ranked second and 2 sixth.
  const std::vector<std::vector<int>> ranked = {{7, 3, 4}, {5, 1, 8, 9, 10, 2}};
  const std::vector<std::vector<int>> gold = {{7}, {1, 2}};
  const RankingMetrics m = ranking_metrics(ranked, gold, {1, 5, 10});
  EXPECT_EQ(m.questions, 2);
  EXPECT_DOUBLE_EQ(m.recall_at(1), 0.5);
  EXPECT_DOUBLE_EQ(m.recall_at(5), (1.0 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(m.recall_at(10), 1.0);
  EXPECT_DOUBLE_EQ(m.all_in_top5, 0.5);
  EXPECT_THROW(m.recall_at(3), Error);
  EXPECT_THROW(ranking_metrics(ranked, {{7}}, {1}), Error);
  EXPECT_THROW(ranking_metrics({{1}}, {{}}, {1}), Error);
  EXPECT_EQ(ranking_metrics({}, {}, {1}).questions, 0);
}

TEST(SelectionMetrics, SetsAreMicroAveraged) {
  const SetMetrics m = set_metrics({{7}, {1, 4, 5}}, {{7}, {1, 2}});
  EXPECT_DOUBLE_EQ(m.precision, 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(m.recall, 2.0 / 3.0);
  EXPECT_NEAR(m.f1, 2 * 0.5 * (2.0 / 3.0) / (0.5 + 2.0 / 3.0), 1e-12);
  EXPECT_EQ(m.questions, 2);
  EXPECT_DOUBLE_EQ(set_metrics({{}}, {{1}}).f1, 0.0);
}
