#pragma once
// How the untrained selection memory scores a database from the cosines of the question with its card and its
// best-matching table, for the sentence encoder and (when present) the lexical encoder.
#include <string>

namespace relmem {

// The question's raw cosines with one database.
struct RawSimilarities {
  float card = 0.0f;
  float table = 0.0f;  // best table
  float lexical_card = 0.0f;
  float lexical_table = 0.0f;

  // Component-wise maximum.
  void keep_max(const RawSimilarities& other);
};

enum class SimilarityFusion { Mean, Max, Card, Table };

SimilarityFusion parse_fusion(const std::string& name);  // "mean", "max", "card", "table"
std::string fusion_name(SimilarityFusion fusion);
float fuse_similarities(SimilarityFusion fusion, float card, float best_table);
// Card and table fused per encoder, then the two encoders averaged (the sentence encoder alone without lexical).
float untrained_score(SimilarityFusion fusion, const RawSimilarities& raw, bool lexical);

}  // namespace relmem
