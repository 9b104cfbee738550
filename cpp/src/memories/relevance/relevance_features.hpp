#pragma once
// The per-pair feature vector of the relevance model (see relevance_model.hpp) and its backward pass, plus row
// normalization with its backward pass. Shared by training (batched pairs) and inference (one question).
#include "relmem/memories/relevance/relevance_model.hpp"

namespace relmem::relevance {

// Writes the config.feature_dim() floats of one pair into x; returns j*, the best-matching table.
int features_forward(const float* question_hat, const DatabaseView& database, const RelevanceConfig& config, float* x);

// Given d(loss)/dx, adds the gradients of the pair's normalized inputs into d_question_hat (p floats),
// d_card_hat (p floats) and d_tables_hat (database.tables rows of p floats).
void features_backward(const float* question_hat, const DatabaseView& database, const RelevanceConfig& config,
                       int best_table,
                       const float* dx, float* d_question_hat, float* d_card_hat, float* d_tables_hat);

// Rows divided by their L2 norms (norms clamped below at 1e-12); `norms` receives the clamped norms.
RowMatrix normalize_rows(const RowMatrix& rows, Eigen::VectorXf& norms);
// d(loss)/d(rows) from d(loss)/d(normalized rows).
RowMatrix normalize_rows_backward(const RowMatrix& normalized, const Eigen::VectorXf& norms,
                                  const RowMatrix& d_normalized);

}  // namespace relmem::relevance
