#include "relmem/memories/relevance/similarity_fusion.hpp"

#include <algorithm>

#include "relmem/common.hpp"

namespace relmem {

SimilarityFusion parse_fusion(const std::string& name) {
  if (name == "mean") return SimilarityFusion::Mean;
  if (name == "max") return SimilarityFusion::Max;
  if (name == "card") return SimilarityFusion::Card;
  if (name == "table") return SimilarityFusion::Table;
  throw Error("unknown similarity fusion '" + name + "' (expected mean, max, card or table)");
}

std::string fusion_name(SimilarityFusion fusion) {
  switch (fusion) {
    case SimilarityFusion::Mean: return "mean";
    case SimilarityFusion::Max: return "max";
    case SimilarityFusion::Card: return "card";
    case SimilarityFusion::Table: return "table";
  }
  return "mean";
}

float fuse_similarities(SimilarityFusion fusion, float card, float best_table) {
  switch (fusion) {
    case SimilarityFusion::Mean: return 0.5f * (card + best_table);
    case SimilarityFusion::Max: return std::max(card, best_table);
    case SimilarityFusion::Card: return card;
    case SimilarityFusion::Table: return best_table;
  }
  return card;
}

}  // namespace relmem

namespace relmem {

void RawSimilarities::keep_max(const RawSimilarities& other) {
  for (const RawSimilarityField& field : kRawSimilarityFields) {
    this->*field.member = std::max(this->*field.member, other.*field.member);
  }
}

float untrained_score(SimilarityFusion fusion, const RawSimilarities& raw, bool lexical) {
  if (!lexical) {
    return fuse_similarities(fusion, raw.card, raw.table) + kColumnWeight * raw.column + kValueWeight * raw.value +
           kWordColumnWeight * raw.word_column + kTableWordColumnWeight * raw.table_word_column +
           kQuestionFormWeight * raw.question_form - kHubnessWeight * raw.hubness;
  }
  // The weighted sum of card and table per encoder: mean fusion weighs them apart, the others fuse them first.
  auto weighted = [fusion](float card, float table, float card_weight, float table_weight) {
    return fusion == SimilarityFusion::Mean ? card_weight * card + table_weight * table
                                            : (card_weight + table_weight) * fuse_similarities(fusion, card, table);
  };
  return weighted(raw.card, raw.table, kCardWeight, kTableWeight) +
         weighted(raw.lexical_card, raw.lexical_table, kLexicalCardWeight, kLexicalTableWeight) +
         kCoverageWeight * raw.lexical_table_coverage + kColumnWeight * raw.column + kValueWeight * raw.value +
         kWordColumnWeight * raw.word_column + kTableWordColumnWeight * raw.table_word_column +
         kQuestionFormWeight * raw.question_form - kHubnessWeight * raw.hubness;
}

RawSimilarities untrained_weights() {
  RawSimilarities weights;
  weights.card = kCardWeight;
  weights.table = kTableWeight;
  weights.lexical_card = kLexicalCardWeight;
  weights.lexical_table = kLexicalTableWeight;
  weights.column = kColumnWeight;
  weights.value = kValueWeight;
  weights.word_column = kWordColumnWeight;
  weights.lexical_table_coverage = kCoverageWeight;
  weights.table_word_column = kTableWordColumnWeight;
  weights.question_form = kQuestionFormWeight;
  weights.hubness = -kHubnessWeight;
  return weights;
}

}  // namespace relmem
