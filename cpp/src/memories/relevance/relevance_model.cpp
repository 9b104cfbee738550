#include "relmem/memories/relevance/relevance_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <Eigen/QR>

#include "relevance_features.hpp"

namespace relmem {
namespace {

using gpu::Transpose;

constexpr float kInitialCosineWeight = 10.0f;

RowMatrix gaussian(int rows, int cols, float stddev, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, stddev);
  RowMatrix m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

// A (p, d) matrix with orthonormal rows (p <= d) or columns (p > d): it preserves cosines as far as p allows.
RowMatrix orthonormal_projection(int p, int d, std::mt19937_64& rng) {
  if (p == d) return RowMatrix::Identity(p, d);
  const int tall = std::max(p, d), thin = std::min(p, d);
  Eigen::MatrixXf g = gaussian(tall, thin, 1.0f, rng);
  Eigen::HouseholderQR<Eigen::MatrixXf> qr(g);
  Eigen::MatrixXf q = qr.householderQ() * Eigen::MatrixXf::Identity(tall, thin);
  if (p < d) return q.transpose();
  return q;
}

DatabaseView view_of(const RelevanceBatch& batch, const RelevanceBatch::Pair& pair, const RowMatrix& cards_hat,
                     const RowMatrix& tables_hat) {
  DatabaseView view;
  view.card_hat = cards_hat.row(pair.database).data();
  view.tables_hat = tables_hat.row(batch.table_offsets[pair.database]).data();
  view.tables = batch.table_offsets[pair.database + 1] - batch.table_offsets[pair.database];
  view.raw = pair.raw;
  view.best = pair.best;
  view.standing = pair.standing;
  return view;
}

// Everything the forward pass computes that the backward pass needs.
struct Forward {
  RowMatrix questions_hat, cards_hat, tables_hat;
  Eigen::VectorXf question_norms, card_norms, table_norms;
  RowMatrix features;        // (pairs, F)
  std::vector<int> best_table;
  RowMatrix hidden_pre;      // (pairs, H)
  Eigen::VectorXf logits;
};

Forward forward(const RelevanceConfig& config, const RelevanceParameters& parameters, const RelevanceBatch& batch,
                gpu::MatrixMultiplier& multiplier) {
  const int64_t n = static_cast<int64_t>(batch.pairs.size());
  Forward f;
  const RowMatrix wq = parameters.question_projection();
  const RowMatrix wd = parameters.database_projection();
  RowMatrix projected;
  multiplier.gemm(Transpose::No, Transpose::Yes, 1.0f, batch.questions, wq, 0.0f, projected);
  f.questions_hat = relevance::normalize_rows(projected, f.question_norms);
  multiplier.gemm(Transpose::No, Transpose::Yes, 1.0f, batch.cards, wd, 0.0f, projected);
  f.cards_hat = relevance::normalize_rows(projected, f.card_norms);
  multiplier.gemm(Transpose::No, Transpose::Yes, 1.0f, batch.tables, wd, 0.0f, projected);
  f.tables_hat = relevance::normalize_rows(projected, f.table_norms);

  f.features.resize(n, config.feature_dim());
  f.best_table.assign(static_cast<size_t>(n), 0);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const auto& pair = batch.pairs[static_cast<size_t>(i)];
    f.best_table[static_cast<size_t>(i)] = relevance::features_forward(
        f.questions_hat.row(pair.question).data(), view_of(batch, pair, f.cards_hat, f.tables_hat), config,
        f.features.row(i).data());
  }
  const RowMatrix w1 = parameters.hidden_weights();
  multiplier.gemm(Transpose::No, Transpose::Yes, 1.0f, f.features, w1, 0.0f, f.hidden_pre);
  f.hidden_pre.rowwise() += parameters.hidden_bias().transpose();
  f.logits = f.hidden_pre.cwiseMax(0.0f) * parameters.output_weights() +
             f.features.leftCols(config.scalar_features) * parameters.scalar_weights();
  f.logits.array() += parameters.output_bias();
  return f;
}

// batch.bce_weight x the mean binary cross-entropy over the pairs, plus batch.listwise_weight x the mean over questions of the softmax
// cross-entropy of each question's pairs against its positives (each 1 / positives); with `d_logits`, also
// d(loss)/d(logits).
float objective(const Eigen::VectorXf& logits, const RelevanceBatch& batch, Eigen::VectorXf* d_logits) {
  const auto& pairs = batch.pairs;
  if (d_logits) d_logits->setZero(static_cast<int64_t>(pairs.size()));
  if (pairs.empty()) return 0.0f;
  const auto n = static_cast<double>(pairs.size());
  double total = 0.0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const float z = logits[static_cast<int64_t>(i)];
    total += binary_cross_entropy_with_logit(z, pairs[i].label);
    if (d_logits) {
      (*d_logits)[static_cast<int64_t>(i)] = static_cast<float>(batch.bce_weight * (sigmoid(z) - pairs[i].label) / n);
    }
  }
  total *= batch.bce_weight / n;
  if (batch.listwise_weight <= 0.0f) return static_cast<float>(total);
  std::vector<std::vector<size_t>> groups(static_cast<size_t>(batch.questions.rows()));
  for (size_t i = 0; i < pairs.size(); ++i) groups[static_cast<size_t>(pairs[i].question)].push_back(i);
  int64_t questions = 0;
  for (const auto& group : groups) questions += std::any_of(group.begin(), group.end(), [&](size_t i) {
    return pairs[i].label > 0.0f;
  });
  double listwise = 0.0;
  for (const auto& group : groups) {
    double positives = 0.0, top = -std::numeric_limits<double>::infinity();
    for (size_t i : group) {
      positives += pairs[i].label;
      top = std::max(top, static_cast<double>(logits[static_cast<int64_t>(i)]));
    }
    if (positives <= 0.0) continue;
    double sum = 0.0;
    for (size_t i : group) sum += std::exp(logits[static_cast<int64_t>(i)] - top);
    const double log_sum = top + std::log(sum);
    for (size_t i : group) {
      const double z = logits[static_cast<int64_t>(i)], target = pairs[i].label / positives;
      listwise -= target * (z - log_sum);
      if (d_logits) {
        (*d_logits)[static_cast<int64_t>(i)] += static_cast<float>(
            batch.listwise_weight * (std::exp(z - log_sum) - target) / static_cast<double>(questions));
      }
    }
  }
  return static_cast<float>(total + batch.listwise_weight * listwise / static_cast<double>(questions));
}

}  // namespace

float sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

float binary_cross_entropy_with_logit(float logit, float label) {
  // log(1 + exp(-|z|)) + max(z, 0) - y z
  return std::log1p(std::exp(-std::fabs(logit))) + std::max(logit, 0.0f) - label * logit;
}

void RelevanceBatch::validate(int dim) const {
  const int64_t databases = static_cast<int64_t>(table_offsets.size()) - 1;
  if (questions.cols() != dim || cards.cols() != dim || tables.cols() != dim) {
    throw Error("relevance batch rows must have " + std::to_string(dim) + " columns");
  }
  if (databases != cards.rows()) throw Error("relevance batch: table_offsets must have one entry per card plus one");
  if (table_offsets.front() != 0 || table_offsets.back() != tables.rows()) {
    throw Error("relevance batch: table_offsets must span the table rows");
  }
  for (int64_t i = 0; i < databases; ++i) {
    if (table_offsets[i + 1] <= table_offsets[i]) {
      throw Error("relevance batch: every database needs at least one table row (use its card when it has none)");
    }
  }
  for (const auto& pair : pairs) {
    if (pair.question < 0 || pair.question >= questions.rows() || pair.database < 0 || pair.database >= databases) {
      throw Error("relevance batch: pair index out of range");
    }
  }
}

RelevanceModel::RelevanceModel(const RelevanceConfig& config, uint64_t seed) : config_(config), parameters_(config) {
  std::mt19937_64 rng(seed);
  const RowMatrix projection = orthonormal_projection(config.projection_dim, config.input_dim, rng);
  parameters_.question_projection() = projection;
  parameters_.database_projection() = projection;
  const int f = config.feature_dim(), h = config.hidden_dim;
  parameters_.hidden_weights() = gaussian(h, f, std::sqrt(2.0f / static_cast<float>(f)), rng);
  // The MLP starts as a small correction; the direct path starts as the untrained memory's ranking.
  parameters_.output_weights() = gaussian(h, 1, 0.1f / std::sqrt(static_cast<float>(h)), rng);
  auto ws = parameters_.scalar_weights();
  ws.setZero();
  if (config.scalar_features >= RelevanceConfig::kScalarFeaturesWithoutCoverage) {
    ws[15] = kInitialCosineWeight;  // the untrained memory's score
    return;
  }
  // Older layouts: the cosines, column and value features with their untrained weights. With a lexical encoder,
  // its two cosines weigh as much as the encoder's four (projected and raw), and the direct path's cosines sum to
  // 10 x the fused score.
  const float semantic = kInitialCosineWeight / (config.lexical_encoder.empty() ? 4.0f : 8.0f);
  const float lexical = config.lexical_encoder.empty() ? 0.0f : kInitialCosineWeight / 4.0f;
  ws.head(7) << semantic, semantic, 0.0f, semantic, semantic, lexical, lexical;
  if (config.scalar_features == RelevanceConfig::kScalarFeaturesWithoutUntrainedScore) {
    ws[11] = kInitialCosineWeight * kColumnWeight;
    ws[12] = kInitialCosineWeight * kValueWeight;
  }
}

RelevanceModel::RelevanceModel(const RelevanceConfig& config, RelevanceParameters parameters)
    : config_(config), parameters_(std::move(parameters)) {
  config_.validate();
  if (static_cast<int64_t>(parameters_.values().size()) != config_.parameter_count()) {
    throw Error("relevance model: parameter count does not match its configuration");
  }
}

void RelevanceModel::set_encoder_top(UseLiteTop top) {
  if (!top.empty() && top.shape().output_width != config_.input_dim) {
    throw Error("the fine-tuned encoder top gives " + std::to_string(top.shape().output_width) +
                "-d vectors; the relevance model takes " + std::to_string(config_.input_dim));
  }
  encoder_top_ = std::move(top);
}

void RelevanceModel::set_threshold(float threshold) {
  if (!(threshold >= 0.0f && threshold <= 1.0f)) throw Error("relevance threshold must lie in [0, 1]");
  threshold_ = threshold;
}

RowMatrix RelevanceModel::project_questions(const RowMatrix& rows) const {
  if (rows.cols() != config_.input_dim) {
    throw Error("relevance model expects " + std::to_string(config_.input_dim) + "-d vectors, got " +
                std::to_string(rows.cols()));
  }
  Eigen::VectorXf norms;
  return relevance::normalize_rows(rows * parameters_.question_projection().transpose(), norms);
}

RowMatrix RelevanceModel::project_databases(const RowMatrix& rows) const {
  if (rows.cols() != config_.input_dim) {
    throw Error("relevance model expects " + std::to_string(config_.input_dim) + "-d vectors, got " +
                std::to_string(rows.cols()));
  }
  Eigen::VectorXf norms;
  return relevance::normalize_rows(rows * parameters_.database_projection().transpose(), norms);
}

std::vector<float> RelevanceModel::logits(const float* question_hat, const std::vector<DatabaseView>& databases) const {
  const int64_t n = static_cast<int64_t>(databases.size());
  RowMatrix features(n, config_.feature_dim());
  for (int64_t i = 0; i < n; ++i) {
    if (databases[static_cast<size_t>(i)].tables < 1) throw Error("relevance model: a database view has no tables");
    relevance::features_forward(question_hat, databases[static_cast<size_t>(i)], config_, features.row(i).data());
  }
  RowMatrix hidden = features * parameters_.hidden_weights().transpose();
  hidden.rowwise() += parameters_.hidden_bias().transpose();
  Eigen::VectorXf out = hidden.cwiseMax(0.0f) * parameters_.output_weights() +
                        features.leftCols(config_.scalar_features) * parameters_.scalar_weights();
  out.array() += parameters_.output_bias();
  return {out.data(), out.data() + n};
}

float RelevanceModel::loss(const RelevanceBatch& batch, gpu::MatrixMultiplier& multiplier) const {
  batch.validate(config_.input_dim);
  return objective(forward(config_, parameters_, batch, multiplier).logits, batch, nullptr);
}

float RelevanceModel::loss_and_gradient(const RelevanceBatch& batch, RelevanceParameters& gradient,
                                        gpu::MatrixMultiplier& multiplier, RowMatrix* question_gradient) const {
  batch.validate(config_.input_dim);
  if (gradient.values().size() != parameters_.values().size()) {
    throw Error("relevance gradient buffer does not match the model's configuration");
  }
  if (question_gradient) *question_gradient = RowMatrix::Zero(batch.questions.rows(), batch.questions.cols());
  if (batch.pairs.empty()) return 0.0f;
  const int p = config_.projection_dim;
  const int64_t n = static_cast<int64_t>(batch.pairs.size());
  Forward f = forward(config_, parameters_, batch, multiplier);

  Eigen::VectorXf d_logits;
  const float loss = objective(f.logits, batch, &d_logits);
  const RowMatrix hidden = f.hidden_pre.cwiseMax(0.0f);
  gradient.output_weights() += hidden.transpose() * d_logits;
  gradient.output_bias() += d_logits.sum();
  gradient.scalar_weights() += f.features.leftCols(config_.scalar_features).transpose() * d_logits;

  RowMatrix d_pre = d_logits * parameters_.output_weights().transpose();
  d_pre = d_pre.cwiseProduct((f.hidden_pre.array() > 0.0f).cast<float>().matrix());
  RowMatrix d_w1;
  multiplier.gemm(Transpose::Yes, Transpose::No, 1.0f, d_pre, f.features, 0.0f, d_w1);
  gradient.hidden_weights() += d_w1;
  gradient.hidden_bias() += d_pre.colwise().sum().transpose();
  RowMatrix d_features;
  const RowMatrix w1 = parameters_.hidden_weights();
  multiplier.gemm(Transpose::No, Transpose::No, 1.0f, d_pre, w1, 0.0f, d_features);
  d_features.leftCols(config_.scalar_features) += d_logits * parameters_.scalar_weights().transpose();

  // Pairs share questions and databases, so their input gradients are summed serially (deterministic order).
  RowMatrix d_questions_hat = RowMatrix::Zero(f.questions_hat.rows(), p);
  RowMatrix d_cards_hat = RowMatrix::Zero(f.cards_hat.rows(), p);
  RowMatrix d_tables_hat = RowMatrix::Zero(f.tables_hat.rows(), p);
  for (int64_t i = 0; i < n; ++i) {
    const auto& pair = batch.pairs[static_cast<size_t>(i)];
    relevance::features_backward(f.questions_hat.row(pair.question).data(),
                                 view_of(batch, pair, f.cards_hat, f.tables_hat), config_,
                                 f.best_table[static_cast<size_t>(i)], d_features.row(i).data(),
                                 d_questions_hat.row(pair.question).data(), d_cards_hat.row(pair.database).data(),
                                 d_tables_hat.row(batch.table_offsets[pair.database]).data());
  }
  const RowMatrix d_questions = relevance::normalize_rows_backward(f.questions_hat, f.question_norms, d_questions_hat);
  const RowMatrix d_cards = relevance::normalize_rows_backward(f.cards_hat, f.card_norms, d_cards_hat);
  const RowMatrix d_tables = relevance::normalize_rows_backward(f.tables_hat, f.table_norms, d_tables_hat);
  RowMatrix d_projection;
  multiplier.gemm(Transpose::Yes, Transpose::No, 1.0f, d_questions, batch.questions, 0.0f, d_projection);
  gradient.question_projection() += d_projection;
  if (question_gradient) {
    const RowMatrix wq = parameters_.question_projection();
    multiplier.gemm(Transpose::No, Transpose::No, 1.0f, d_questions, wq, 0.0f, *question_gradient);
  }
  multiplier.gemm(Transpose::Yes, Transpose::No, 1.0f, d_cards, batch.cards, 0.0f, d_projection);
  multiplier.gemm(Transpose::Yes, Transpose::No, 1.0f, d_tables, batch.tables, 1.0f, d_projection);
  gradient.database_projection() += d_projection;
  return loss;
}

}  // namespace relmem
