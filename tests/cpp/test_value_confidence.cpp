// The calibrated replacement confidence of post-processing: its gates, that it grows with the evidence, and what
// the fitted model replaces and leaves alone.
#include <gtest/gtest.h>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/values/value_confidence.hpp"
#include "relmem/memories/values/value_correction.hpp"
#include "relmem/memories/values/value_lexicon.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

ValueCandidate candidate(const std::string& value, double score, const std::string& channel) {
  return ValueCandidate{value, score, MatchComponents{}, "t", "c", channel};
}

std::string gate(const std::string& written, const std::string& stored, const std::string& channel,
                 double score = 0.9) {
  return replacement_evidence(written, {candidate(stored, score, channel), candidate("other", 0.3, "lexical")}, 50)
      .gate;
}

bool lexicon_present() { return ValueLexicon::shared().missing_sources().empty(); }

// The hashing encoder under another encoder's name: a memory whose post-processing must use that encoder's model.
class NamedHashingEncoder : public HashingEncoder {
 public:
  explicit NamedHashingEncoder(std::string name) : HashingEncoder(256), name_(std::move(name)) {}
  std::string name() const override { return name_; }

 private:
  std::string name_;
};

}  // namespace

TEST(ValueConfidence, FeaturesAreNamedAndBounded) {
  EXPECT_EQ(confidence_feature_names().size(), kConfidenceFeatures);
  const auto e = replacement_evidence("Frnace", {candidate("France", 0.83, "lexical")}, 7);
  EXPECT_TRUE(e.gate.empty());
  const double p = replacement_confidence(e);
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 1.0);
  EXPECT_EQ(replacement_evidence("x", {}, 7).features, (std::array<double, kConfidenceFeatures>{}));
}

TEST(ValueConfidence, GatesStopWhatSpellingAloneCannotSay) {
  EXPECT_EQ(gate("West Germany", "Germany", "lexical"), "more_specific");
  EXPECT_EQ(gate("Room 337", "Room 338", "lexical"), "other_number");
  EXPECT_EQ(gate("Frnace", "France", "lexical"), "");
  EXPECT_EQ(gate("Germany", "DEU", "country"), "");  // a meaning channel says they are one thing
  if (!lexicon_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  EXPECT_EQ(gate("Iceland", "Ireland", "lexical"), "known_words");  // two countries, not a typo
  EXPECT_EQ(gate("Democrat", "Democratic", "lexical"), "");          // one word derived from the other
  EXPECT_EQ(replacement_confidence(replacement_evidence("Iceland", {candidate("Ireland", 0.86, "lexical")}, 20)), 0);
  // WordNet or the encoder relate members of one class; a contrasting word is another member.
  EXPECT_EQ(gate("Republican", "Democratic", "wordnet", 0.74), "contrast");
  EXPECT_EQ(gate("Spanish", "French", "semantic", 0.6), "contrast");
  EXPECT_EQ(gate("quick", "fast", "wordnet"), "");              // one sense
  EXPECT_EQ(gate("Charge card", "Credit Card", "wordnet"), "");  // one WordNet phrase, though the words differ
}

TEST(ValueConfidence, GrowsWithScoreAndMargin) {
  const auto p = [](double best, double second, const char* channel) {
    return replacement_confidence(
        replacement_evidence("Boston Celtics", {candidate("Boston Celtic", best, channel),
                                                candidate("Other", second, "lexical")},
                             100));
  };
  for (const char* channel : {"lexical", "semantic", "wordnet", "abbreviation", "country"}) {
    EXPECT_LT(p(0.6, 0.3, channel), p(0.8, 0.3, channel)) << channel;
    EXPECT_LT(p(0.8, 0.75, channel), p(0.8, 0.3, channel)) << channel;
  }
  EXPECT_GT(p(0.95, 0.3, "country"), ConfidenceModel::fitted().threshold);   // a concept is decisive
  EXPECT_LT(p(0.45, 0.43, "semantic"), ConfidenceModel::fitted().threshold);  // an encoder tie is not
}

TEST(ValueConfidence, PostProcessingReplacesConfidentMatchesOnly) {
  if (!lexicon_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  relmem_test::TempDir dir;
  relmem_test::make_database(dir.file("dbs/shop.sqlite"), R"sql(
    CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT, country TEXT);
    INSERT INTO orders VALUES (1, 'Completed', 'Ireland'), (2, 'Cancelled', 'France'), (3, 'Completed', 'Spain');
  )sql");
  const Catalog catalog = Catalog::open(dir.file("dbs"));
  const ValueMemory memory = ValueMemory::build(catalog, std::make_shared<HashingEncoder>(256));
  const auto finished = correct_values("SELECT id FROM orders WHERE status = 'Finished'", "shop", catalog, memory);
  ASSERT_EQ(finished.replacements.size(), 1u);
  EXPECT_EQ(finished.replacements[0].replacement, "Completed");
  EXPECT_EQ(finished.replacements[0].channel, "wordnet");
  EXPECT_GE(finished.replacements[0].confidence, ConfidenceModel::fitted().threshold);
  const auto iceland = correct_values("SELECT id FROM orders WHERE country = 'Iceland'", "shop", catalog, memory);
  EXPECT_TRUE(iceland.replacements.empty());
  CorrectionOptions never;
  never.min_confidence = 1.01;
  EXPECT_TRUE(correct_values("SELECT id FROM orders WHERE status = 'Finished'", "shop", catalog, memory, never)
                  .replacements.empty());
}

TEST(ValueConfidence, EachEncoderHasItsModelAndOthersGetUseLites) {
  const ConfidenceModel &use_lite = ConfidenceModel::fitted("use-lite"), &minilm = ConfidenceModel::fitted("minilm");
  EXPECT_NE(use_lite.weights, minilm.weights);
  EXPECT_NE(use_lite.threshold, minilm.threshold);
  EXPECT_EQ(&ConfidenceModel::fitted("minilm:/models/minilm-fine-tuned"), &minilm);  // a fine-tuned MiniLM
  EXPECT_EQ(&ConfidenceModel::fitted("minilm-large"), &use_lite);
  EXPECT_EQ(&ConfidenceModel::fitted("hashing:256"), &use_lite);
  EXPECT_EQ(&ConfidenceModel::fitted(), &use_lite);
}

TEST(ValueConfidence, PostProcessingUsesTheModelOfTheMemorysEncoder) {
  relmem_test::TempDir dir;
  relmem_test::make_database(dir.file("dbs/shop.sqlite"), R"sql(
    CREATE TABLE orders (id INTEGER PRIMARY KEY, country TEXT);
    INSERT INTO orders VALUES (1, 'France'), (2, 'Spain'), (3, 'Portugal');
  )sql");
  const Catalog catalog = Catalog::open(dir.file("dbs"));
  const std::string sql = "SELECT id FROM orders WHERE country = 'Frnace'";
  for (const std::string name : {"use-lite", "minilm"}) {
    const ValueMemory memory = ValueMemory::build(catalog, std::make_shared<NamedHashingEncoder>(name));
    const auto checks = check_values(sql, "shop", catalog, memory, 10);
    ASSERT_EQ(checks.size(), 1u);
    const double expected = replacement_confidence(
        replacement_evidence("Frnace", checks[0].similar, memory.column("shop", "orders", "country")->count),
        ConfidenceModel::fitted(name));
    CorrectionOptions any;
    any.min_confidence = 0;
    const auto fixed = correct_values(sql, "shop", catalog, memory, any);
    ASSERT_EQ(fixed.replacements.size(), 1u) << name;
    EXPECT_DOUBLE_EQ(fixed.replacements[0].confidence, expected) << name;
  }
  EXPECT_NE(replacement_confidence(replacement_evidence("Frnace", {candidate("France", 0.83, "lexical")}, 3),
                                   ConfidenceModel::fitted("use-lite")),
            replacement_confidence(replacement_evidence("Frnace", {candidate("France", 0.83, "lexical")}, 3),
                                   ConfidenceModel::fitted("minilm")));
}
