// Lexical matching: normalization, trigrams, edit distance, tokens, abbreviations, and the fused score.
#include <gtest/gtest.h>

#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/memories/values/value_scoring.hpp"

using namespace relmem;

TEST(ValueSimilarity, NormalizesCaseAccentsPunctuationAndSpacing) {
  EXPECT_EQ(normalize_value("  São   Paulo! "), "sao paulo");
  EXPECT_EQ(normalize_value("Ærø Straße"), "aero strasse");
  EXPECT_EQ(normalize_value("St. Mary's"), "st marys");
  EXPECT_EQ(normalize_value("R&D"), "r and d");
  EXPECT_EQ(normalize_value("Rock-n-Roll"), "rock n roll");
  EXPECT_EQ(normalize_value("Cafe\xCC\x81"), "cafe");  // combining acute accent
  EXPECT_EQ(normalize_value("東京"), "東京");
  EXPECT_EQ(normalize_value("\xff"), "y");  // a stray byte reads as Latin-1, never breaks
  EXPECT_EQ(content_key(value_tokens(normalize_value("R and D"))), "rd");
  EXPECT_EQ(compact_value("new york"), "newyork");
}

TEST(ValueSimilarity, StemsPlurals) {
  EXPECT_EQ(stem_token("cities"), "city");
  EXPECT_EQ(stem_token("dramas"), "drama");
  EXPECT_EQ(stem_token("boxes"), "box");
  EXPECT_EQ(stem_token("status"), "status");
  EXPECT_EQ(stem_token("glass"), "glass");
}

TEST(ValueSimilarity, EditDistanceCountsTranspositionsAsOneEdit) {
  EXPECT_EQ(edit_distance(code_points("boston"), code_points("bsoton")), 1);
  EXPECT_EQ(edit_distance(code_points("kitten"), code_points("sitting")), 3);
  EXPECT_EQ(edit_distance(code_points("zürich"), code_points("zurich")), 1);  // code points, not bytes
  EXPECT_DOUBLE_EQ(edit_similarity(code_points(""), code_points("")), 1.0);
}

TEST(ValueSimilarity, TrigramDiceAndTokens) {
  EXPECT_DOUBLE_EQ(trigram_dice(trigram_set("boston"), trigram_set("boston")), 1.0);
  EXPECT_DOUBLE_EQ(trigram_dice(trigram_set("abc"), trigram_set("xyz")), 0.0);
  EXPECT_GT(trigram_dice(trigram_set("bostn"), trigram_set("boston")), 0.5);
  EXPECT_DOUBLE_EQ(token_similarity({"drama", "films"}, {"dramas", "film"}), 1.0);
  EXPECT_NEAR(token_similarity({"bosnia", "herzegovina"}, {"bosnia", "and", "herzegovina"}), 0.8, 1e-9);
}

TEST(ValueSimilarity, RecognizesAbbreviations) {
  auto score = [](const char* a, const char* b) {
    return abbreviation_score(value_tokens(normalize_value(a)), value_tokens(normalize_value(b)));
  };
  EXPECT_DOUBLE_EQ(score("Los Angeles", "LA"), 0.95);
  EXPECT_DOUBLE_EQ(score("NYC", "New York City"), 0.95);
  EXPECT_DOUBLE_EQ(score("Research and Development", "R&D"), 0.95);
  EXPECT_DOUBLE_EQ(score("Finance", "Fin"), 0.9);
  EXPECT_DOUBLE_EQ(score("female", "F"), 0.75);
  EXPECT_NEAR(score("Marketing", "Mktg"), 0.81, 1e-9);  // keeps k, t, g of r, k, t, n, g
  EXPECT_DOUBLE_EQ(score("Intl Business", "International Business"), 0.88);
  EXPECT_DOUBLE_EQ(score("Information Technology Staff", "IT Staff"), 0.9);  // initials among other words
  EXPECT_DOUBLE_EQ(score("Welcome to New York", "Welcome to NY"), 0.9);
  EXPECT_NEAR(score("Department", "Dept"), 0.8, 1e-9);  // keeps t of r, t
  EXPECT_DOUBLE_EQ(score("PartFilled", "Paid"), 0.0);  // abbreviations drop vowels, they do not pick them
  EXPECT_DOUBLE_EQ(score("Audiobooks", "AIB"), 0.0);
  EXPECT_DOUBLE_EQ(score("Boston", "Chicago"), 0.0);
  EXPECT_DOUBLE_EQ(score("Boston", "boston"), 0.0);  // the same text is no abbreviation
}

TEST(ValueSimilarity, AnAbbreviationThatDropsOnlyVowelsBeatsOneThatPassesOverConsonants) {
  auto score = [](const char* a, const char* b) {
    return abbreviation_score(value_tokens(normalize_value(a)), value_tokens(normalize_value(b)));
  };
  EXPECT_DOUBLE_EQ(score("Brnd", "Brander"), 0.85);  // b, r, n, d: every consonant up to the last one written
  EXPECT_NEAR(score("Brnd", "Bernardus"), 0.825, 1e-9);  // passes over an r
  EXPECT_DOUBLE_EQ(score("Gln", "Giuliano"), 0.85);
  EXPECT_NEAR(score("Gln", "Goldman"), 0.8, 1e-9);
  EXPECT_DOUBLE_EQ(score("Ind", "Indonesia"), 0.9);  // a prefix
  EXPECT_NEAR(score("Ind", "Ireland"), 0.8, 1e-9);  // n, d of r, l, n, d
  EXPECT_DOUBLE_EQ(score("Intl Business", "International Business"), 0.88);  // word by word: unchanged
}

TEST(ValueSimilarity, FusionRanksIdentityAboveAbbreviationAboveNoise) {
  auto fused = [](const char* query, const char* stored) {
    return fuse(compare_values(prepare_value(query), prepare_value(stored)));
  };
  EXPECT_DOUBLE_EQ(fused("LA", "LA"), 1.0);
  EXPECT_DOUBLE_EQ(fused("la", "LA"), FusionWeights{}.case_only);
  EXPECT_DOUBLE_EQ(fused("L.A.", "LA"), FusionWeights{}.normalized);
  EXPECT_GT(fused("Los Angeles", "LA"), 0.9);
  EXPECT_LT(fused("Los Angeles", "LA"), FusionWeights{}.normalized);
  EXPECT_LT(fused("Los Angeles", "SF"), 0.3);
  EXPECT_GT(fused("Massachusets", "Massachusetts"), fused("Massachusets", "Michigan"));
  MatchComponents with_semantic = compare_values(prepare_value("female"), prepare_value("woman"));
  const double lexical_only = fuse(with_semantic);
  with_semantic.semantic = 0.9;
  EXPECT_GT(fuse(with_semantic), lexical_only);
}
