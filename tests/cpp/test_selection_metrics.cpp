// Ranking and set metrics of labelled questions (the benchmark's and the trainer's one definition).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "relmem/common.hpp"
#include "relmem/memories/relevance/selection_calibration.hpp"
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

// Set selection as select_set does it: the forced candidates (each part's best) whatever their probability, then the
// others above the threshold; the fitted threshold is the one with the best F1 of exactly that selection.
TEST(SelectionCalibration, ForcedCandidatesAreChosenWhateverTheThreshold) {
  ScoredQuestion single{{0.9f, 0.6f, 0.2f}, {1, 0, 0}, 1};
  EXPECT_EQ(selected_count(single, 0.95f), 1);  // at least the best
  EXPECT_EQ(selected_count(single, 0.5f), 2);
  // Three parts, each part's best forced though two score low; the others follow, best first.
  ScoredQuestion parts{{0.9f, 0.3f, 0.2f, 0.8f, 0.1f}, {1, 1, 1, 0, 0}, 3, 3};
  EXPECT_EQ(selected_count(parts, 0.95f), 3);
  EXPECT_EQ(selected_count(parts, 0.5f), 4);
  EXPECT_EQ(selected_count(parts, 0.05f), 5);
  // The single question wants a threshold above 0.6 and the parts one above 0.8: both met above 0.8, with F1 1.
  const std::vector<ScoredQuestion> questions{single, parts};
  EXPECT_DOUBLE_EQ(set_metrics(questions, best_threshold(questions)).f1, 1.0);
  EXPECT_GT(best_threshold(questions), 0.8f);
}

TEST(SelectionMetrics, PlattScalingRecoversKnownLogisticParameters) {
  // Candidates whose relevance is drawn with p = sigmoid(4 s - 6): the likelihood fit finds scale 4 and bias -6.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> score(0.0f, 3.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<ScoredQuestion> questions(4000);
  for (auto& q : questions) {
    for (int i = 0; i < 10; ++i) {
      const float s = score(rng);
      q.values.push_back(s);
      q.relevant.push_back(coin(rng) < 1.0 / (1.0 + std::exp(-(4.0 * s - 6.0))) ? 1 : 0);
    }
  }
  const PlattScaling platt = fit_platt(questions);
  EXPECT_NEAR(platt.scale, 4.0f, 0.2f);
  EXPECT_NEAR(platt.bias, -6.0f, 0.3f);
  EXPECT_NEAR(platt.probability(1.5f), 0.5f, 0.02f);
  EXPECT_THROW(fit_platt({ScoredQuestion{{1.0f, 0.5f}, {0, 0}, 1, 1}}), Error);
}

TEST(SelectionMetrics, PlattScalingWithLeadsRecoversAllThreeWeights) {
  // p = sigmoid(2 s + 5 lead - 3): fitted on candidates that carry their lead, the fit finds all three.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> score(0.0f, 2.0f), lead(-1.0f, 1.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<ScoredQuestion> questions(4000);
  for (auto& q : questions) {
    for (int i = 0; i < 10; ++i) {
      const float s = score(rng), l = lead(rng);
      q.values.push_back(s);
      q.leads.push_back(l);
      q.relevant.push_back(coin(rng) < 1.0 / (1.0 + std::exp(-(2.0 * s + 5.0 * l - 3.0))) ? 1 : 0);
    }
  }
  const PlattScaling platt = fit_platt(questions);
  EXPECT_NEAR(platt.scale, 2.0f, 0.2f);
  EXPECT_NEAR(platt.lead, 5.0f, 0.3f);
  EXPECT_NEAR(platt.bias, -3.0f, 0.3f);
  EXPECT_NEAR(platt.probability(1.0f, 0.2f), 0.5f, 0.03f);
  // Without leads on every question, the lead is no feature.
  questions.back().leads.clear();
  EXPECT_FLOAT_EQ(fit_platt(questions).lead, 0.0f);
}

TEST(SelectionMetrics, GatedPlattScalingFitsTheGateAndTheRankingApart) {
  // Questions with a database: each of its 5 candidates relevant with p = sigmoid(3 s - 2); the question's best
  // score is high. Questions no database answers: every candidate irrelevant, low best scores. Whether a question
  // has a database follows answered = sigmoid(6 best - 6) of its best score.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> score(0.0f, 2.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<ScoredQuestion> questions;
  while (questions.size() < 6000) {
    ScoredQuestion q;
    for (int i = 0; i < 5; ++i) q.values.push_back(score(rng));
    const float best = *std::max_element(q.values.begin(), q.values.end());
    q.gold = coin(rng) < 1.0 / (1.0 + std::exp(-(6.0 * best - 6.0))) ? 1 : 0;
    for (float s : q.values) {
      q.relevant.push_back(q.gold && coin(rng) < 1.0 / (1.0 + std::exp(-(3.0 * s - 2.0))) ? 1 : 0);
      q.bests.push_back(best);
    }
    q.part_bests = {best};
    questions.push_back(std::move(q));
  }
  const PlattScaling platt = fit_platt(questions, true);
  ASSERT_TRUE(platt.gated);
  EXPECT_NEAR(platt.scale, 3.0f, 0.25f);
  EXPECT_NEAR(platt.bias, -2.0f, 0.3f);
  EXPECT_NEAR(platt.gate_scale, 6.0f, 0.6f);
  EXPECT_NEAR(platt.gate_bias, -6.0f, 0.6f);
  EXPECT_NEAR(platt.probability(1.0f, 0.0f, 1.0f), 0.5f / (1.0f + std::exp(-1.0f)), 0.03f);
  // A gate needs every question's bests and questions of both kinds; without one, the best does not count.
  auto without_bests = questions;
  without_bests.back().bests.clear();
  EXPECT_THROW(fit_platt(without_bests, true), Error);
  std::vector<ScoredQuestion> answered;
  for (const auto& q : questions)
    if (q.gold > 0) answered.push_back(q);
  EXPECT_THROW(fit_platt(answered, true), Error);
  const PlattScaling ungated = fit_platt(questions);
  EXPECT_FALSE(ungated.gated);
  EXPECT_FLOAT_EQ(ungated.probability(1.0f, 0.0f, -5.0f), ungated.probability(1.0f));
}

TEST(SelectionMetrics, NoDatabaseQuestionsWeighAsMuchAsTheOthers) {
  std::vector<ScoredQuestion> questions(6);
  for (int i = 0; i < 4; ++i) questions[i].gold = 1;  // two questions no database answers
  weigh_no_database_questions(questions);
  EXPECT_DOUBLE_EQ(questions[0].weight, 1.0);
  EXPECT_DOUBLE_EQ(questions[5].weight, 2.0);
  std::vector<ScoredQuestion> answered(3);
  for (auto& q : answered) q.gold = 1;
  weigh_no_database_questions(answered);
  for (const auto& q : answered) EXPECT_DOUBLE_EQ(q.weight, 1.0);
}

TEST(SelectionMetrics, WeightsCountAsRepeatedCandidates) {
  // One candidate of weight 3 fits as three copies of it.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> score(0.0f, 3.0f);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<ScoredQuestion> weighted, repeated;
  for (int i = 0; i < 300; ++i) {
    ScoredQuestion q;
    const float s = score(rng);
    q.values = {s};
    q.relevant = {static_cast<char>(coin(rng) < 1.0 / (1.0 + std::exp(-(2.0 * s - 3.0))) ? 1 : 0)};
    q.weight = i % 2 ? 3.0 : 1.0;
    weighted.push_back(q);
    q.weight = 1.0;
    for (int copy = 0; copy < (i % 2 ? 3 : 1); ++copy) repeated.push_back(q);
  }
  const PlattScaling a = fit_platt(weighted), b = fit_platt(repeated);
  EXPECT_NEAR(a.scale, b.scale, 1e-3f);
  EXPECT_NEAR(a.bias, b.bias, 1e-3f);
}
