#pragma once
// Relevance classifier p(question, database) on top of a sentence encoder, trained with binary cross-entropy
// (relmem-train-relevance); the encoder stays frozen or has its top layer(s) fine-tuned on the question side. With û = normalize(Wq q), ĉ = normalize(Wd card), t̂_j =
// normalize(Wd table_j) and j* = argmax_j û·t̂_j, one (question, database) pair gets the features
//   x = [û·ĉ, û·t̂_j*, mean_j û·t̂_j, r, r - r_best, s, s - s_best, u, u - u_best, p (û ⊙ ĉ), p (û ⊙ t̂_j*)]
// where r = (q·card, max_j q·table_j, lex(q)·lex(card), max_j lex(q)·lex(table_j)) are the raw cosines of the
// frozen encoder and of the optional lexical encoder (IDF-weighted hashing; zero without one), s = (max_k q·column_k,
// stored-value evidence) (see similarity_fusion.hpp), and r_best, s_best the same features' maxima over every
// candidate database of the question (how far this database is behind the best one tells more than the cosine
// alone, across collections), u = untrained_score(mean fusion, r, s) the untrained memory's score and u_best the
// same of r_best, s_best, v = (mean over the question's words of their best column's cosine, best lexical table
// coverage), the token-level interaction of the question with the schema (similarity_fusion.hpp), and
// and the database's standing among the candidates: its table word-column w and w - w_best, its word lead l
// (similarity_fusion.hpp), the reciprocal ranks k under the untrained score and eight channels, its untrained margin
// m over the best other candidate and its value exclusivity e (pool_standing.hpp),
//   x = [..., u, u - u_best, v, v - v_best, w, w - w_best, l, k, m, e, p (û ⊙ ĉ), p (û ⊙ t̂_j*)],
//   logit = w2 · relu(W1 x + b1) + ws · x[0:S] + b2,   probability = sigmoid(logit),
// with S = 35 scalar features. A fresh model is a residual over the untrained memory: ws weighs u alone and the MLP
// starts small, so training starts from the untrained ranking. Older model files have S = 21 (without w, l, k, m
// and e), 17 (without v either), 15 (without u and v) or 11 (without s, u and v).
// Forward and backward passes are written by hand; tests check every gradient against finite differences.
#include <cstdint>
#include <string>
#include <vector>

#include "relmem/common.hpp"
#include "relmem/encoders/finetuning/use_lite_top.hpp"
#include "relmem/linalg/matrix_multiplier.hpp"
#include "relmem/memories/relevance/pool_standing.hpp"
#include "relmem/memories/relevance/similarity_fusion.hpp"

namespace relmem {

struct RelevanceConfig {
  int input_dim = 512;       // encoder dimension
  int projection_dim = 256;  // p
  int hidden_dim = 32;       // H
  std::string encoder;       // name of the encoder the model was trained with, e.g. "use-lite"
  std::string lexical_encoder;  // name of the lexical encoder of features 5 and 6, e.g. "hashing:4096"; "" = none

  static constexpr int kScalarFeatures = 35;
  static constexpr int kScalarFeaturesWithoutStanding = 21;
  static constexpr int kScalarFeaturesWithoutCoverage = 17;
  static constexpr int kScalarFeaturesWithoutUntrainedScore = 15;
  static constexpr int kScalarFeaturesWithoutColumnsAndValues = 11;
  int scalar_features = kScalarFeatures;  // S: 35, or 21, 17, 15 or 11 in older model files
  int feature_dim() const { return scalar_features + 2 * projection_dim; }
  // Number of floats in the flat parameter vector.
  int64_t parameter_count() const;
  void validate() const;  // relmem::Error on non-positive sizes
};

// Every trainable tensor lives in one flat float vector (Adam, save/load and gradient checks treat it as one);
// the accessors map named views onto it.
class RelevanceParameters {
 public:
  using MatrixView = Eigen::Map<RowMatrix>;
  using ConstMatrixView = Eigen::Map<const RowMatrix>;
  using VectorView = Eigen::Map<Eigen::VectorXf>;
  using ConstVectorView = Eigen::Map<const Eigen::VectorXf>;

  RelevanceParameters() = default;
  explicit RelevanceParameters(const RelevanceConfig& config);  // all zeros

  MatrixView question_projection();  // Wq (p, d)
  MatrixView database_projection();  // Wd (p, d)
  MatrixView hidden_weights();       // W1 (H, F)
  VectorView hidden_bias();          // b1 (H)
  VectorView output_weights();       // w2 (H)
  VectorView scalar_weights();       // ws (S)
  float& output_bias();              // b2
  ConstMatrixView question_projection() const;
  ConstMatrixView database_projection() const;
  ConstMatrixView hidden_weights() const;
  ConstVectorView hidden_bias() const;
  ConstVectorView output_weights() const;
  ConstVectorView scalar_weights() const;
  float output_bias() const;

  std::vector<float>& values() { return values_; }
  const std::vector<float>& values() const { return values_; }
  void set_zero();

 private:
  int p_ = 0, d_ = 0, h_ = 0, f_ = 0, s_ = 0;
  std::vector<float> values_;
};

// The database side of a pair: projected, normalized card and table rows plus the raw cosines with the
// question. tables_hat holds `tables` rows of p floats (at least one: a database without tables uses its card).
struct DatabaseView {
  const float* card_hat = nullptr;
  const float* tables_hat = nullptr;
  int tables = 0;
  RawSimilarities raw;
  RawSimilarities best;  // maxima of the raw cosines over the question's candidate databases
  PoolStanding standing;  // among the question's candidate databases
};

// A training batch: distinct questions and databases (raw encoder rows) and labelled pairs between them.
struct RelevanceBatch {
  struct Pair {
    int question = 0;  // row of questions
    int database = 0;  // index into table_offsets
    float label = 0.0f;
    RawSimilarities raw;   // computed from the frozen encoders, not from the batch's rows
    RawSimilarities best;  // the question's maxima of them over the collection
    PoolStanding standing;  // among the question's candidates
  };
  RowMatrix questions;                // (nq, d)
  RowMatrix cards;                    // (ndb, d)
  RowMatrix tables;                   // (nt, d), database i owns rows [table_offsets[i], table_offsets[i+1])
  std::vector<int> table_offsets{0};  // ndb + 1 entries
  std::vector<Pair> pairs;
  // Weight of the listwise term beside the pairs' binary cross-entropy: the softmax cross-entropy of each
  // question's pairs against its positive ones, which rewards ranking the right databases above the wrong ones.
  float listwise_weight = 0.0f;
  // Weight of the pairs' binary cross-entropy (0: the listwise term alone, which only orders each question's pairs).
  float bce_weight = 1.0f;

  void validate(int dim) const;  // relmem::Error on inconsistent shapes or indices
};

class RelevanceModel {
 public:
  RelevanceModel() = default;
  // Fresh model: Wq = Wd = a random orthonormal projection (the identity when p == d), a He-initialized MLP with
  // small output weights, and a direct path that scores 10 x the mean of the card and best-table cosines, so
  // training starts from the untrained memory's ranking.
  RelevanceModel(const RelevanceConfig& config, uint64_t seed);
  RelevanceModel(const RelevanceConfig& config, RelevanceParameters parameters);

  const RelevanceConfig& config() const { return config_; }
  RelevanceParameters& parameters() { return parameters_; }
  const RelevanceParameters& parameters() const { return parameters_; }

  // Probability threshold of set selection, calibrated on held-out questions by the trainer.
  float threshold() const { return threshold_; }
  void set_threshold(float threshold);
  // Free-form facts about how the model was trained (flags, data, held-out figures), kept in the model file.
  const std::string& training_info_json() const { return training_info_json_; }
  void set_training_info_json(const std::string& json) { training_info_json_ = json; }

  // The fine-tuned copy of the encoder's top layer(s), empty when the encoder stays frozen. With one, question
  // vectors for the question projection come from it (UseLiteEncoder::encode_with_top); the raw cosine features
  // and the database side keep the frozen encoder.
  const UseLiteTop& encoder_top() const { return encoder_top_; }
  UseLiteTop& encoder_top() { return encoder_top_; }
  void set_encoder_top(UseLiteTop top);
  bool fine_tunes_encoder() const { return !encoder_top_.empty(); }

  // Normalized projections of raw encoder rows: (n, d) -> (n, p).
  RowMatrix project_questions(const RowMatrix& rows) const;
  RowMatrix project_databases(const RowMatrix& rows) const;
  // Logits of one projected question (p floats) against each database.
  std::vector<float> logits(const float* question_hat, const std::vector<DatabaseView>& databases) const;

  // Mean binary cross-entropy over the batch's pairs (times its bce_weight, plus its listwise term); adds d(loss)/d(parameters) into
  // `gradient` (which must have this model's config). Products run on `multiplier` (CPU or CUDA). With `question_gradient`, also
  // d(loss)/d(batch.questions), for training the encoder below.
  float loss_and_gradient(const RelevanceBatch& batch, RelevanceParameters& gradient,
                          gpu::MatrixMultiplier& multiplier, RowMatrix* question_gradient = nullptr) const;
  // The same loss without gradients.
  float loss(const RelevanceBatch& batch, gpu::MatrixMultiplier& multiplier) const;

  // Versioned binary file: magic, format version, JSON header (config, threshold, training info, the encoder
  // top's shape), parameters, the encoder top's parameters, checksum. Version 1 files (no encoder top) still load. load() throws relmem::Error naming the problem on missing, truncated, corrupt or foreign files.
  void save(const std::string& path) const;
  static RelevanceModel load(const std::string& path);

 private:
  RelevanceConfig config_;
  RelevanceParameters parameters_;
  UseLiteTop encoder_top_;
  float threshold_ = 0.5f;
  std::string training_info_json_ = "{}";
};

float sigmoid(float x);
// -y log p - (1-y) log(1-p) with p = sigmoid(logit), computed without overflow.
float binary_cross_entropy_with_logit(float logit, float label);

}  // namespace relmem
