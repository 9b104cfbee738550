#include "relevance_features.hpp"

#include <algorithm>

namespace relmem::relevance {
namespace {
constexpr float kNormFloor = 1e-12f;
static_assert(RelevanceConfig::kScalarFeatures == 26 + PoolStanding::kChannels, "the standing features end the scalars");

float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}
}  // namespace

int features_forward(const float* question_hat, const DatabaseView& database, const RelevanceConfig& config, float* x) {
  const int p = config.projection_dim;
  const float scale = static_cast<float>(p);
  int best = 0;
  float best_score = 0.0f, score_sum = 0.0f;
  for (int j = 0; j < database.tables; ++j) {
    const float score = dot(question_hat, database.tables_hat + static_cast<int64_t>(j) * p, p);
    score_sum += score;
    if (j == 0 || score > best_score) {
      best = j;
      best_score = score;
    }
  }
  const float* card = database.card_hat;
  const float* table = database.tables_hat + static_cast<int64_t>(best) * p;
  x[0] = dot(question_hat, card, p);
  x[1] = best_score;
  x[2] = score_sum / static_cast<float>(database.tables);
  x[3] = database.raw.card;
  x[4] = database.raw.table;
  x[5] = database.raw.lexical_card;
  x[6] = database.raw.lexical_table;
  x[7] = database.raw.card - database.best.card;
  x[8] = database.raw.table - database.best.table;
  x[9] = database.raw.lexical_card - database.best.lexical_card;
  x[10] = database.raw.lexical_table - database.best.lexical_table;
  if (config.scalar_features >= RelevanceConfig::kScalarFeaturesWithoutUntrainedScore) {
    x[11] = database.raw.column;
    x[12] = database.raw.value;
    x[13] = database.raw.column - database.best.column;
    x[14] = database.raw.value - database.best.value;
  }
  if (config.scalar_features >= RelevanceConfig::kScalarFeaturesWithoutCoverage) {
    const bool lexical = !config.lexical_encoder.empty();
    x[15] = untrained_score(SimilarityFusion::Mean, database.raw, lexical);
    x[16] = x[15] - untrained_score(SimilarityFusion::Mean, database.best, lexical);
  }
  if (config.scalar_features >= RelevanceConfig::kScalarFeaturesWithoutStanding) {
    x[17] = database.raw.word_column;
    x[18] = database.raw.lexical_table_coverage;
    x[19] = database.raw.word_column - database.best.word_column;
    x[20] = database.raw.lexical_table_coverage - database.best.lexical_table_coverage;
  }
  if (config.scalar_features == RelevanceConfig::kScalarFeatures) {
    const PoolStanding& standing = database.standing;
    x[21] = database.raw.table_word_column;
    x[22] = database.raw.table_word_column - database.best.table_word_column;
    x[23] = database.raw.word_lead;
    std::copy_n(standing.reciprocal_rank, PoolStanding::kChannels, x + 24);
    x[24 + PoolStanding::kChannels] = standing.margin;
    x[25 + PoolStanding::kChannels] = standing.value_exclusivity;
  }
  float* card_product = x + config.scalar_features;
  float* table_product = card_product + p;
  for (int i = 0; i < p; ++i) {
    card_product[i] = scale * question_hat[i] * card[i];
    table_product[i] = scale * question_hat[i] * table[i];
  }
  return best;
}

void features_backward(const float* question_hat, const DatabaseView& database, const RelevanceConfig& config,
                       int best_table, const float* dx, float* d_question_hat, float* d_card_hat,
                       float* d_tables_hat) {
  const int p = config.projection_dim;
  const float scale = static_cast<float>(p);
  const float* card = database.card_hat;
  const float* table = database.tables_hat + static_cast<int64_t>(best_table) * p;
  float* d_table = d_tables_hat + static_cast<int64_t>(best_table) * p;
  const float d_card_score = dx[0], d_best_score = dx[1];
  const float d_each_score = dx[2] / static_cast<float>(database.tables);
  const float* d_card_product = dx + config.scalar_features;
  const float* d_table_product = d_card_product + p;
  for (int i = 0; i < p; ++i) {
    d_question_hat[i] += d_card_score * card[i] + d_best_score * table[i] + scale * d_card_product[i] * card[i] +
                         scale * d_table_product[i] * table[i];
    d_card_hat[i] += d_card_score * question_hat[i] + scale * d_card_product[i] * question_hat[i];
    d_table[i] += d_best_score * question_hat[i] + scale * d_table_product[i] * question_hat[i];
  }
  for (int j = 0; j < database.tables; ++j) {
    const float* row = database.tables_hat + static_cast<int64_t>(j) * p;
    float* d_row = d_tables_hat + static_cast<int64_t>(j) * p;
    for (int i = 0; i < p; ++i) {
      d_question_hat[i] += d_each_score * row[i];
      d_row[i] += d_each_score * question_hat[i];
    }
  }
}

RowMatrix normalize_rows(const RowMatrix& rows, Eigen::VectorXf& norms) {
  norms = rows.rowwise().norm().cwiseMax(kNormFloor);
  return norms.cwiseInverse().asDiagonal() * rows;
}

RowMatrix normalize_rows_backward(const RowMatrix& normalized, const Eigen::VectorXf& norms,
                                  const RowMatrix& d_normalized) {
  // y = u / |u|  =>  du = (dy - y (y . dy)) / |u|
  const Eigen::VectorXf along = (normalized.cwiseProduct(d_normalized)).rowwise().sum();
  RowMatrix d_rows = d_normalized - along.asDiagonal() * normalized;
  return norms.cwiseInverse().asDiagonal() * d_rows;
}

}  // namespace relmem::relevance
