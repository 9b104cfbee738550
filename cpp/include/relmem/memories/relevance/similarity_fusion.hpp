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
// Chosen on 2,000 questions of Spider's train set against all 157 databases (recall@1 0.606 -> 0.652); Spider dev
// was not used to choose them.
constexpr float kColumnWeight = 0.2f;
constexpr float kValueWeight = 0.01f;
// Chosen on the 7,000 questions of Spider's train set against all 157 databases, with the synonym fallback of the
// word-column term (selection_memory.cpp): lexical weight 0.5 / 0.625 / 0.75 / 1, coverage 0 / 0.05 / 0.1 / 0.2,
// word-column 0.5 / 0.75; recall@1 / @5 0.697 / 0.893 at 0.5, 0, 0.5 (the earlier weights), 0.704 / 0.895 at
// 0.75, 0.2, 0.75. Since the database's name heads its card only (database_texts.hpp), card and table weigh apart,
// chosen on the 6,738 train_spider.json questions of the 157 databases and their 5,514 synonym versions
// (training/synonym_questions.py), whole questions: a grid of card 0.1-0.35, table 0.1-0.35, lexical card
// 0.25-0.625, lexical table 0.25-0.625; of the settings below the earlier weights (0.25 each, lexical 0.375 each,
// the name in every table text: recall@1 / @5 0.732 / 0.930, synonym versions 0.614 / 0.859) on none of the four,
// these have the highest sum: 0.734 / 0.933, 0.621 / 0.865. Spider dev was not used to choose them.
constexpr float kCardWeight = 0.2f;
constexpr float kTableWeight = 0.1f;
constexpr float kLexicalCardWeight = 0.625f;
constexpr float kLexicalTableWeight = 0.25f;
constexpr float kCoverageWeight = 0.2f;
// With the table word-column term, and every question word reading its synonyms (selection_memory.cpp), chosen on
// every second train_spider.json question of the 157 databases and their synonym versions, whole questions: word
// column 0.25 / 0.4 / 0.5 / 0.75 by table word-column 0 / 0.25 / 0.4 / 0.5, with synonyms weighed 1 / 0.95 / 0.9
// / 0.8. Before (0.75, no table term, synonyms only below 0.6): recall@1 / @5 0.737 / 0.934, synonym versions
// 0.616 / 0.857. Of the settings at least as good on all four, 0.4, 0.25 at 0.95 has the highest sum: 0.737 /
// 0.936, 0.653 / 0.886. Spider dev was not used to choose them.
constexpr float kWordColumnWeight = 0.4f;
constexpr float kTableWordColumnWeight = 0.25f;
// Chosen on the 6,738 train_spider.json questions of the 157 databases and their 5,516 synonym versions, whole
// questions, from 0 / 0.2 / 0.3 / 0.4 / 0.5 (scripts/score_weight.py): every weight is at least as good as none
// on all four figures (recall@1 / @5 0.7409 / 0.9365, synonym versions 0.6659 / 0.8930), and 0.3 has the highest sum:
// 0.7496 / 0.9394, 0.6748 / 0.9003. With the literal forms alone (no synonym forms: database_texts.hpp) the synonym
// versions lost at every weight (0.6497 / 0.8829 at 0.4). Spider dev was not used to choose it.
constexpr float kQuestionFormWeight = 0.3f;
// Chosen as the question-form weight was (scripts/score_weight.py --field hubness), from 0 / 0.3 / 0.4 / 0.5 / 0.6 /
// 0.8: only 0.3 and 0.4 are at least as good as none on all four figures (none: recall@1 / @5 0.7496 / 0.9394,
// synonym versions 0.6748 / 0.9003), and 0.4 has the higher sum: 0.7502 / 0.9418, 0.6804 / 0.9039. Spider dev was
// not used to choose it. It holds on databases whose questions played no part (score_weight.py --heldout-of: the
// trainer's 41 held-out databases in a collection of the training ones, 0.8199 / 0.9657 -> 0.8269 / 0.9679).
constexpr float kHubnessWeight = 0.4f;

}  // namespace relmem
