#pragma once
// How the untrained selection memory scores a database from the cosines of the question with its card and its
// best-matching table, for the sentence encoder and (when present) the lexical encoder, plus its best-matching
// column and the evidence of the values it stores (value_postings.hpp).
#include <string>

namespace relmem {

// The question's raw cosines with one database.
struct RawSimilarities {
  float card = 0.0f;
  float table = 0.0f;  // best table
  float lexical_card = 0.0f;
  float lexical_table = 0.0f;
  float column = 0.0f;  // best column (sentence encoder)
  float value = 0.0f;   // stored-value evidence
  // Token-level (late) interaction: each content word of the question meets its best-matching column of the
  // database (sentence encoder cosine), averaged over the words; and the share of the question's IDF-weighted
  // lexical mass (words, word pairs, character n-grams) found in the database's best table card. Unlike the
  // cosines of whole texts, neither is diluted by a large schema.
  float word_column = 0.0f;
  float lexical_table_coverage = 0.0f;
  // The word-column mean within one table, the database's best: a question that lists a table's columns ("the
  // number of products, district and location of each store") finds it under another table name (`shop`).
  float table_word_column = 0.0f;
  // How far the database leads the other candidates word by word: per question word, its best column's cosine
  // minus the best other candidate's (0 where another leads), averaged over the words. High when the database alone
  // has columns for some of the question's words. Not in the untrained score; a relevance model feature.
  float word_lead = 0.0f;
  // The question's best cosine with the database's question forms (database_texts.hpp: "How many singer are
  // there?"), sentence encoder; the best column stands in for a database stored without them.
  float question_form = 0.0f;
  // How close the database is to questions about other databases: the mean, over reference questions (question
  // forms drawn from the whole collection), of their whole-question cosine terms of the untrained score with it,
  // minus that mean's average over the collection. A schema of broad, common words (`hr_1`, `department_store`)
  // resembles every question a little and would lead many rankings it does not belong to; the untrained score
  // subtracts it (a hubness correction in the spirit of CSLS's). The same for every question.
  float hubness = 0.0f;

  // Component-wise maximum.
  void keep_max(const RawSimilarities& other);
};

// Every field of RawSimilarities by name, in declaration order: the names the Python bindings give them.
struct RawSimilarityField {
  const char* name;
  float RawSimilarities::*member;
};
inline constexpr RawSimilarityField kRawSimilarityFields[] = {
    {"card", &RawSimilarities::card},
    {"table", &RawSimilarities::table},
    {"lexical_card", &RawSimilarities::lexical_card},
    {"lexical_table", &RawSimilarities::lexical_table},
    {"column", &RawSimilarities::column},
    {"value", &RawSimilarities::value},
    {"word_column", &RawSimilarities::word_column},
    {"lexical_table_coverage", &RawSimilarities::lexical_table_coverage},
    {"table_word_column", &RawSimilarities::table_word_column},
    {"word_lead", &RawSimilarities::word_lead},
    {"question_form", &RawSimilarities::question_form},
    {"hubness", &RawSimilarities::hubness},
};

enum class SimilarityFusion { Mean, Max, Card, Table };

SimilarityFusion parse_fusion(const std::string& name);  // "mean", "max", "card", "table"
std::string fusion_name(SimilarityFusion fusion);
float fuse_similarities(SimilarityFusion fusion, float card, float best_table);
// Card and best table per encoder: with mean fusion, kCardWeight x card + kTableWeight x table for the sentence
// encoder and kLexicalCardWeight x card + kLexicalTableWeight x table for the lexical one (other fusions weigh
// their one fused value by the pair's sum); without lexical the sentence encoder's fused value alone. Plus
// kColumnWeight x column + kValueWeight x value + kWordColumnWeight x word_column + kCoverageWeight x
// lexical_table_coverage (with lexical) + kTableWordColumnWeight x table_word_column + kQuestionFormWeight x
// question_form - kHubnessWeight x hubness.
float untrained_score(SimilarityFusion fusion, const RawSimilarities& raw, bool lexical);
// untrained_score with mean fusion and a lexical channel as one weight per raw field: the sum of weight x field
// (hubness negative, word_lead 0).
RawSimilarities untrained_weights();
// Chosen on 2,000 train_spider.json questions against all 157 databases; docs/selection.md.
constexpr float kColumnWeight = 0.2f;
constexpr float kValueWeight = 0.01f;
// Chosen by a grid on train_spider.json questions and their synonym versions (Spider dev not used); docs/selection.md.
constexpr float kCardWeight = 0.2f;
constexpr float kTableWeight = 0.1f;
constexpr float kLexicalCardWeight = 0.625f;
constexpr float kLexicalTableWeight = 0.25f;
constexpr float kCoverageWeight = 0.2f;
// Chosen by a grid on train_spider.json questions and their synonym versions (Spider dev not used); docs/selection.md.
constexpr float kWordColumnWeight = 0.4f;
constexpr float kTableWordColumnWeight = 0.25f;
// Chosen on train_spider.json and its synonym versions with scripts/score_weight.py; docs/selection.md.
constexpr float kQuestionFormWeight = 0.3f;
// Chosen on train_spider.json and its synonym versions with scripts/score_weight.py --field hubness; docs/selection.md.
constexpr float kHubnessWeight = 0.4f;

}  // namespace relmem
