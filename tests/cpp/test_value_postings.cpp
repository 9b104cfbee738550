// Stored-value evidence for database selection: question phrases, postings, rarity weights, add/remove.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "relmem/common.hpp"
#include "relmem/memories/relevance/value_postings.hpp"
#include "relmem/memories/text/question_spans.hpp"
#include "test_util.hpp"

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

TEST(QuestionPhrases, PossessiveWordsAlsoEndBeforeTheirS) {
  EXPECT_EQ(question_phrases("What is Kyle's id?", 1), (std::vector<std::string>{"id", "kyle", "kyles"}));
  EXPECT_EQ(question_phrases("Kyle\u2019s friends", 2),
            (std::vector<std::string>{"friends", "kyle", "kyles", "kyles friends"}));
  EXPECT_EQ(question_phrases("Show the bus's route", 1), (std::vector<std::string>{"bus", "buss", "route"}));
  EXPECT_EQ(question_phrases("Who is the boss?", 1), (std::vector<std::string>{"boss"}));
  EXPECT_EQ(question_phrases("LAs 's xs", 1), (std::vector<std::string>{"las", "xs"}));  // too short for "'s"
}

namespace {

// The span of `question` whose text is `text`; an empty one (and a failure) when there is none.
QuestionSpan span_of(const std::string& question, const std::string& text) {
  for (const QuestionSpan& span : question_spans(question, 3))
    if (question.substr(span.start, span.end - span.start) == text) return span;
  ADD_FAILURE() << "no span '" << text << "' in: " << question;
  return QuestionSpan{0, 0};
}

}  // namespace

TEST(QuestionSpans, NamedSpansAreCapitalizedMidSentenceOrQuoted) {
  auto named = [](const std::string& question, const std::string& text) {
    return is_named(question, span_of(question, text));
  };
  EXPECT_TRUE(named("How many people live in Gelderland district?", "Gelderland"));
  EXPECT_TRUE(named("How many people live in Gelderland district?", "Gelderland district"));
  EXPECT_FALSE(named("How many people live in Gelderland district?", "district"));
  EXPECT_TRUE(named("Songs named 'hey jude'", "hey jude"));
  EXPECT_FALSE(named("Anguilla is where? Gelderland too", "Anguilla"));  // starts the question
  EXPECT_FALSE(named("Anguilla is where? Gelderland too", "Gelderland"));  // starts a sentence
}

TEST(QuestionSpans, ProperNamesAreCapitalsOrCapitalizedWords) {
  auto proper = [](const std::string& question, const std::string& text) {
    return is_proper_name(question, span_of(question, text));
  };
  const std::string flights = "List flights from Los Angeles to New York cheaper than 300 dollars.";
  EXPECT_TRUE(proper(flights, "Los Angeles"));
  EXPECT_TRUE(proper(flights, "New York"));
  EXPECT_FALSE(proper(flights, "New York cheaper"));  // a name and an ordinary word: not one name
  EXPECT_FALSE(proper(flights, "flights"));
  EXPECT_FALSE(proper(flights, "300 dollars"));
  EXPECT_TRUE(proper("How many parks are there in the state of NY?", "NY"));
  EXPECT_FALSE(proper("Which park did the most people attend?", "park"));
  EXPECT_FALSE(proper("Which park did the most people attend?", "people attend"));
  EXPECT_TRUE(proper("Shops in the Bank of America tower", "Bank of America"));  // "of" may stay lowercase
  EXPECT_TRUE(proper("Songs named 'hey jude'", "hey jude"));
  EXPECT_FALSE(proper("Italian restaurants in town?", "Italian"));  // capitalized only for starting the question
  EXPECT_TRUE(proper("Los Angeles restaurants?", "Los Angeles"));   // two capitalized words still read as a name
  EXPECT_TRUE(proper("NYC restaurants?", "NYC"));
}

TEST(ValuePostings, NamedPhrasesCountTwice) {
  ValuePostings postings;
  postings.add(1, {"gelderland"});
  postings.add(2, {"district"});
  const auto evidence = postings.question_evidence("Who lives in Gelderland or a district?", 4);
  EXPECT_FLOAT_EQ(evidence.at(1), kNamedPhraseBoost * std::log(4.0f));
  EXPECT_FLOAT_EQ(evidence.at(2), std::log(4.0f));
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

// Saved postings load read or mapped with the same values and evidence; a mapped set copies itself on the first
// change; damage is refused with the file named.
TEST(ValuePostings, FilesRoundTripReadOrMappedAndDamageIsRefused) {
  ValuePostings postings;
  postings.add(4, {"anguilla", "republic", "english"});
  postings.add(2, {"english", "usa"});
  postings.add(9, {"usa", "", "zürich"});
  relmem_test::TempDir dir;
  const std::string path = dir.file("values.postings");
  postings.save(path);
  for (bool mmap : {false, true}) {
    ValuePostings loaded = ValuePostings::load(path, mmap);
    EXPECT_EQ(loaded.values(4), postings.values(4));
    EXPECT_EQ(loaded.values(9), (std::vector<std::string>{"", "usa", "zürich"}));
    EXPECT_TRUE(loaded.values(3).empty());
    EXPECT_TRUE(loaded.contains(2));
    EXPECT_FALSE(loaded.contains(3));
    EXPECT_EQ(loaded.evidence({"english", "zürich", "france"}, 10),
              postings.evidence({"english", "zürich", "france"}, 10));
    loaded.save(dir.file("again.postings"));
    EXPECT_EQ(relmem_test::read_bytes(dir.file("again.postings")), relmem_test::read_bytes(path));
    loaded.remove(3);  // unknown: nothing changes
    loaded.add(3, {"usa"});
    loaded.remove(9);
    EXPECT_NEAR(loaded.evidence({"usa"}, 4).at(3), std::log(2.0), 1e-6);
    EXPECT_EQ(loaded.evidence({"zürich"}, 4).size(), 0u);
    EXPECT_EQ(loaded.values(4), postings.values(4));
  }
  const std::string bytes = relmem_test::read_bytes(path);
  for (size_t at : {size_t{10}, size_t{70}, bytes.size() / 2, bytes.size() - 3}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x01;
    relmem_test::write_bytes(path, damaged);
    for (bool mmap : {false, true}) {
      try {
        ValuePostings::load(path, mmap);
        ADD_FAILURE() << "loaded a file damaged at byte " << at;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
    }
  }
  relmem_test::write_bytes(path, bytes.substr(0, 40));
  EXPECT_THROW(ValuePostings::load(path), Error);
  EXPECT_THROW(ValuePostings::load(dir.file("missing.postings"), true), Error);
}
