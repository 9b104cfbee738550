// Stored-value evidence for database selection: question phrases, postings, rarity weights, add/remove.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "relmem/memories/relevance/value_postings.hpp"
#include "relmem/memories/text/question_spans.hpp"

using namespace relmem;

TEST(QuestionPhrases, RunsOfWordsWithoutFunctionWordsAtTheirEdges) {
  const auto phrases = question_phrases("Which continent is Anguilla in?", 3);
  EXPECT_EQ(phrases, (std::vector<std::string>{"anguilla", "continent", "continent is anguilla"}));
  const auto longer = question_phrases("How many people live in New York City?", 3);
  for (const std::string expected : {"new york city", "new york", "york city", "people live", "live"})
    EXPECT_NE(std::find(longer.begin(), longer.end(), expected), longer.end()) << expected;
  EXPECT_EQ(std::find(longer.begin(), longer.end(), "in new york"), longer.end());  // "in" starts no phrase
  EXPECT_EQ(question_phrases("Songs named 'Hey Jude!'", 1),
            (std::vector<std::string>{"hey", "hey jude", "jude", "named", "songs"}));
  EXPECT_TRUE(question_phrases("what is the number of them?", 3).empty());
}

TEST(ValuePostings, EvidenceWeighsRareValuesMore) {
  ValuePostings postings;
  postings.add(1, {"anguilla", "republic", "english", "english"});
  postings.add(2, {"english", "usa"});
  postings.add(3, {"usa"});
  EXPECT_EQ(postings.values(1), (std::vector<std::string>{"anguilla", "english", "republic"}));
  const auto evidence = postings.evidence({"anguilla", "english", "france"}, 10);
  ASSERT_EQ(evidence.size(), 2u);
  EXPECT_NEAR(evidence.at(1), std::log(10.0) + std::log(10.0 / 2.0), 1e-5);
  EXPECT_NEAR(evidence.at(2), std::log(10.0 / 2.0), 1e-5);
  EXPECT_TRUE(postings.evidence({"france"}, 10).empty());
  // A value every database stores is no evidence.
  EXPECT_NEAR(postings.evidence({"usa"}, 2).at(2), 0.0, 1e-6);
}

TEST(ValuePostings, AddReplacesAndRemoveForgets) {
  ValuePostings postings;
  postings.add(1, {"anguilla"});
  postings.add(2, {"anguilla"});
  postings.add(1, {"aruba"});  // replaces database 1's values
  EXPECT_EQ(postings.evidence({"anguilla"}, 4).count(1), 0u);
  EXPECT_NEAR(postings.evidence({"anguilla"}, 4).at(2), std::log(4.0), 1e-5);
  postings.remove(2);
  EXPECT_FALSE(postings.contains(2));
  EXPECT_TRUE(postings.evidence({"anguilla"}, 4).empty());
  EXPECT_TRUE(postings.values(2).empty());
  postings.remove(7);  // unknown: nothing happens
  EXPECT_EQ(postings.evidence({"aruba"}, 4).size(), 1u);
}
