// The card-cosine trainer end to end on a tiny random BERT: its run report, what the loss does, the decay toward the
// pretrained weights, and bad options. Its gradients are checked in test_bert_top.cpp and against torch in
// tests/python/test_bert_top_gradients.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "relmem/common.hpp"
#include "relmem/memories/training/card_relevance_training.hpp"
#include "test_util.hpp"
#include "tiny_bert.hpp"

using namespace relmem;

namespace {

// Eight databases, one topic each; every question names its database's two topic words.
const std::vector<std::vector<std::string>> kTopics = {{"singer", "stadium"}, {"flight", "airport"},
                                                       {"student", "course"}, {"doctor", "patient"},
                                                       {"movie", "actor"},    {"river", "city"},
                                                       {"book", "author"},    {"car", "engine"}};
const std::vector<std::string> kForms = {"how many {0} ?", "list every {1} .", "what is the {0} of the {1} ?",
                                         "show the {1} names .", "which {0} has most {1} ?", "count the {1} ."};

std::vector<std::string> vocab() {
  std::vector<std::string> words = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "how",   "many", "list",
                                    "every", "what",  "is",    "the",   "of",     "show",  "names", "which",
                                    "has",   "most",  "count", "?",     ".",      ":",     "(",     ")",
                                    ",",     "database"};
  for (const auto& topic : kTopics) words.insert(words.end(), topic.begin(), topic.end());
  return words;
}

std::string fill(std::string form, const std::vector<std::string>& topic) {
  for (int i = 0; i < 2; ++i) {
    const std::string slot = "{" + std::to_string(i) + "}";
    for (auto at = form.find(slot); at != std::string::npos; at = form.find(slot)) form.replace(at, 3, topic[i]);
  }
  return form;
}

struct Collection {
  std::vector<DatabaseTexts> databases;
  std::vector<LabeledQuestion> questions;
};

Collection collection() {
  Collection c;
  for (size_t d = 0; d < kTopics.size(); ++d) {
    DatabaseTexts db;
    db.name = "db" + std::to_string(d);
    db.card = "database : " + kTopics[d][0] + " ( " + kTopics[d][1] + " )";
    c.databases.push_back(db);
    for (const auto& form : kForms) c.questions.push_back({fill(form, kTopics[d]), {db.name}, {}});
  }
  return c;
}

CardRelevanceOptions small_run() {
  CardRelevanceOptions o;
  o.epochs = 4;
  o.learning_rate = 3e-3f;
  o.batch = 8;
  o.negatives = 2;
  o.hard_pool = 3;
  o.heldout_fraction = 0.25f;
  o.composite_ratio = 0.3f;
  o.threads = 1;
  return o;
}

double largest_change(const std::vector<float>& a, const std::vector<float>& b) {
  double largest = 0.0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(static_cast<double>(a[i]) - b[i]));
  return largest;
}

class CardRelevanceTraining : public ::testing::Test {
 protected:
  void SetUp() override { relmem_test::write_tiny_bert(dir_.path(), "F32", "", vocab()); }
  BertEncoder encoder() const {
    BertEncoderOptions exact;
    exact.half_weights = false;
    return BertEncoder(dir_.path(), exact);
  }
  relmem_test::TempDir dir_;
};

}  // namespace

TEST_F(CardRelevanceTraining, ReportsItsRunAndLowersTheTrainingLoss) {
  const BertEncoder bert = encoder();
  const Collection c = collection();
  const CardRelevanceResult result = train_card_relevance(bert, c.databases, c.questions, small_run());
  ASSERT_EQ(result.epochs.size(), 4u);
  EXPECT_LT(result.epochs.back().loss, result.epochs.front().loss);
  EXPECT_GE(result.best_epoch, 1);
  EXPECT_LE(result.best_epoch, 4);
  EXPECT_EQ(result.heldout_databases.size(), 2u);
  EXPECT_EQ(result.top.parameters().size(), bert.top(1).parameters().size());
  EXPECT_NE(result.top.parameters(), bert.top(1).parameters());
  EXPECT_GT(result.training_questions, 36);  // six training databases' 36 questions and their composites
  EXPECT_EQ(result.calibration.questions, 12);
  EXPECT_TRUE(std::isfinite(result.head.scale) && std::isfinite(result.head.bias));
  const auto info = nlohmann::json::parse(result.training_info_json);
  EXPECT_EQ(info.at("weight_decay").get<float>(), 0.0f);
  EXPECT_EQ(info.at("heldout_database_names").size(), 2u);
}

TEST_F(CardRelevanceTraining, WeightDecayKeepsTheLayersNearTheirPretrainedWeights) {
  const BertEncoder bert = encoder();
  const Collection c = collection();
  const std::vector<float> pretrained = bert.top(1).parameters();
  const CardRelevanceOptions free = small_run();
  CardRelevanceOptions anchored = free;
  // rate x decay = 1: each step first returns every weight to its pretrained value, then takes one Adam step, whose
  // size is the rate times |m / sqrt(v)| (at most 1 / sqrt(1 - beta2) = 31.6, near 1 in practice).
  anchored.weight_decay = 1.0f / free.learning_rate;
  const double free_change =
      largest_change(train_card_relevance(bert, c.databases, c.questions, free).top.parameters(), pretrained);
  const double anchored_change =
      largest_change(train_card_relevance(bert, c.databases, c.questions, anchored).top.parameters(), pretrained);
  EXPECT_GT(free_change, 4.0 * free.learning_rate);
  EXPECT_LE(anchored_change, 4.0 * free.learning_rate);
}

TEST_F(CardRelevanceTraining, RejectsBadOptions) {
  const BertEncoder bert = encoder();
  const Collection c = collection();
  CardRelevanceOptions o = small_run();
  o.weight_decay = -1.0f;
  EXPECT_THROW(train_card_relevance(bert, c.databases, c.questions, o), Error);
  o = small_run();
  o.heldout_fraction = 1.0f;
  EXPECT_THROW(train_card_relevance(bert, c.databases, c.questions, o), Error);
  o = small_run();
  EXPECT_THROW(train_card_relevance(bert, {c.databases.begin(), c.databases.begin() + 3}, c.questions, o), Error);
}
