// Relevance classifier: every backward pass against central finite differences, inference agreeing with the
// training forward pass, and the model file (round trip, corrupt, truncated, foreign, version).
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <limits>
#include <random>

#include "../../cpp/src/memories/relevance/relevance_features.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

RowMatrix unit_rows(int rows, int cols, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  RowMatrix m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  m.rowwise().normalize();
  return m;
}

// 3 questions, 4 databases with 1..3 tables, every question paired with every database.
RelevanceBatch make_batch(int dim, std::mt19937_64& rng) {
  RelevanceBatch batch;
  batch.questions = unit_rows(3, dim, rng);
  batch.cards = unit_rows(4, dim, rng);
  batch.table_offsets = {0, 1, 3, 6, 8};
  batch.tables = unit_rows(8, dim, rng);
  std::uniform_real_distribution<float> raw(-0.2f, 0.9f);
  for (int q = 0; q < 3; ++q)
    for (int d = 0; d < 4; ++d)
      batch.pairs.push_back(
          {q, d, (q + d) % 3 == 0 ? 1.0f : 0.0f,
           {raw(rng), raw(rng), raw(rng), raw(rng), raw(rng), 3 * raw(rng), raw(rng), raw(rng), raw(rng), raw(rng)}});
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (auto& pair : batch.pairs) {
    for (float& rank : pair.standing.reciprocal_rank) rank = unit(rng);
    pair.standing.margin = raw(rng) - 0.3f;
    pair.standing.value_exclusivity = unit(rng);
  }
  return batch;
}

RelevanceModel perturbed_model(const RelevanceConfig& config, uint64_t seed) {
  RelevanceModel model(config, seed);
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  for (float& v : model.parameters().values()) v += noise(rng);  // away from the identity and zero init
  return model;
}

// Central differences around float parameters. Where an entry disagrees, its one-sided slopes tell a ReLU or a max
// over tables switching within the step (they differ, the analytic gradient being one of them when they differ
// little: such entries are counted and must stay rare) from a wrong gradient (they agree with each other).
void expect_gradient_matches(const RelevanceConfig& config, uint64_t seed, float listwise_weight = 0.0f,
                             float bce_weight = 1.0f) {
  omp_set_num_threads(1);  // tiny batches: thread start-up would dominate the thousands of loss evaluations
  std::mt19937_64 rng(seed);
  RelevanceBatch batch = make_batch(config.input_dim, rng);
  batch.listwise_weight = listwise_weight;
  batch.bce_weight = bce_weight;
  RelevanceModel model = perturbed_model(config, seed);
  auto cpu = gpu::make_cpu_matrix_multiplier();
  RelevanceParameters gradient(config);
  const float loss = model.loss_and_gradient(batch, gradient, *cpu);
  EXPECT_NEAR(loss, model.loss(batch, *cpu), 1e-6);
  auto& values = model.parameters().values();
  auto slopes = [&](size_t i, double eps) {
    const float original = values[i];
    const double here = model.loss(batch, *cpu);
    values[i] = static_cast<float>(original + eps);
    const double plus = model.loss(batch, *cpu);
    values[i] = static_cast<float>(original - eps);
    const double minus = model.loss(batch, *cpu);
    values[i] = original;
    return std::make_pair((here - minus) / eps, (plus - here) / eps);
  };
  // The loss is a float: a slope over a step of 1e-3 moves in units of the loss's spacing / 1e-3.
  const double resolution = (std::nextafter(loss, std::numeric_limits<float>::infinity()) - loss) / 1e-3;
  int checked = 0, nonzero = 0, kinks = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const double analytic = gradient.values()[i];
    const auto [left, right] = slopes(i, 1e-3);
    const double central = (left + right) / 2;
    const double tolerance = 2e-4 + resolution + 2e-2 * std::fabs(central);
    ++checked;
    nonzero += std::fabs(analytic) > 1e-6 ? 1 : 0;
    if (std::fabs(analytic - central) <= tolerance) continue;
    // A switch within the step: the one-sided slopes differ and the analytic gradient is one of them.
    const bool one_side = std::fabs(analytic - left) <= tolerance || std::fabs(analytic - right) <= tolerance;
    if (std::fabs(left - right) > 2 * tolerance || (std::fabs(left - right) > tolerance && one_side)) {
      ++kinks;
      continue;
    }
    ADD_FAILURE() << "parameter " << i << ": analytic " << analytic << ", slopes " << left << " / " << right;
  }
  EXPECT_LE(kinks, 3) << "too many parameters near a ReLU or max switch";
  EXPECT_EQ(checked, config.parameter_count());
  EXPECT_GT(nonzero, checked / 2);  // the check is not vacuous
}

}  // namespace

TEST(RelevanceGradient, ProjectionNarrowerThanInput) {
  RelevanceConfig config;
  config.input_dim = 7;
  config.projection_dim = 5;
  config.hidden_dim = 4;
  expect_gradient_matches(config, 11);
}

TEST(RelevanceGradient, ProjectionAsWideAsInput) {
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 6;
  config.hidden_dim = 3;
  expect_gradient_matches(config, 23);
}

TEST(RelevanceGradient, WithTheListwiseTerm) {
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 4;
  config.hidden_dim = 3;
  expect_gradient_matches(config, 37, 0.25f);
}

// The listwise term is the softmax cross-entropy of each question's pairs against its positives.
TEST(RelevanceModel, ListwiseTermIsTheSoftmaxCrossEntropy) {
  std::mt19937_64 rng(3);
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 4;
  config.hidden_dim = 3;
  const RelevanceModel model = perturbed_model(config, 3);
  auto cpu = gpu::make_cpu_matrix_multiplier();
  RelevanceBatch batch = make_batch(config.input_dim, rng);
  const float pointwise = model.loss(batch, *cpu);
  batch.listwise_weight = 0.5f;
  const float combined = model.loss(batch, *cpu);
  // Each pair's logit z from its own one-pair batch: its loss labelled 0 minus its loss labelled 1 is
  // log(1 + exp(z)) - log(1 + exp(-z)) = z.
  auto logit_of = [&](const RelevanceBatch::Pair& pair) {
    RelevanceBatch single = batch;
    single.listwise_weight = 0.0f;
    single.pairs = {pair};
    double z = 0.0;
    for (float label : {0.0f, 1.0f}) {
      single.pairs[0].label = label;
      z += (label > 0.0f ? -1.0 : 1.0) * model.loss(single, *cpu);
    }
    return z;
  };
  double listwise = 0.0;
  for (int q = 0; q < 3; ++q) {
    std::vector<double> logits, labels;
    for (const auto& pair : batch.pairs) {
      if (pair.question != q) continue;
      logits.push_back(logit_of(pair));
      labels.push_back(pair.label);
    }
    double sum = 0.0, positives = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) {
      sum += std::exp(logits[i]);
      positives += labels[i];
    }
    for (size_t i = 0; i < logits.size(); ++i) listwise -= labels[i] / positives * (logits[i] - std::log(sum));
  }
  EXPECT_NEAR(combined - pointwise, 0.5 * listwise / 3.0, 1e-4);  // every question has a positive
  // The BCE weight scales the pointwise term alone; at 0 the listwise term is the whole loss.
  batch.bce_weight = 0.25f;
  EXPECT_NEAR(model.loss(batch, *cpu), 0.25 * pointwise + 0.5 * listwise / 3.0, 1e-4);
  batch.bce_weight = 0.0f;
  EXPECT_NEAR(model.loss(batch, *cpu), 0.5 * listwise / 3.0, 1e-4);
}

TEST(RelevanceGradient, WithTheListwiseTermAlone) {
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 4;
  config.hidden_dim = 3;
  expect_gradient_matches(config, 41, 1.0f, 0.0f);
}

TEST(RelevanceGradient, ModelsWithoutColumnAndValueFeatures) {
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 4;
  config.hidden_dim = 3;
  config.scalar_features = RelevanceConfig::kScalarFeaturesWithoutColumnsAndValues;
  expect_gradient_matches(config, 29);
}

TEST(RelevanceGradient, ModelsWithoutStandingFeatures) {
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 4;
  config.hidden_dim = 3;
  config.scalar_features = RelevanceConfig::kScalarFeaturesWithoutStanding;
  expect_gradient_matches(config, 37);
}

// The standing features follow the earlier ones; a model of an earlier layout reads none of them.
TEST(RelevanceModel, StandingFeaturesAndEarlierLayouts) {
  const int p = 3;
  std::mt19937_64 rng(8);
  RowMatrix q = unit_rows(1, p, rng), card = unit_rows(1, p, rng), tables = unit_rows(2, p, rng);
  DatabaseView view{card.data(), tables.data(), 2};
  view.raw.table_word_column = 0.7f;
  view.best.table_word_column = 0.9f;
  view.raw.word_lead = 0.0625f;
  view.standing.reciprocal_rank[0] = 0.5f;
  view.standing.reciprocal_rank[PoolStanding::kChannels - 1] = 0.25f;
  view.standing.margin = -0.125f;
  view.standing.value_exclusivity = 1.0f / 3.0f;
  RelevanceConfig config;
  config.projection_dim = p;
  std::vector<float> x(static_cast<size_t>(config.feature_dim()));
  relevance::features_forward(q.data(), view, config, x.data());
  EXPECT_FLOAT_EQ(x[21], 0.7f);
  EXPECT_NEAR(x[22], -0.2f, 1e-6f);
  EXPECT_FLOAT_EQ(x[23], 0.0625f);
  EXPECT_FLOAT_EQ(x[24], 0.5f);
  EXPECT_FLOAT_EQ(x[23 + PoolStanding::kChannels], 0.25f);
  EXPECT_FLOAT_EQ(x[24 + PoolStanding::kChannels], -0.125f);
  EXPECT_FLOAT_EQ(x[25 + PoolStanding::kChannels], 1.0f / 3.0f);

  config.input_dim = 5;
  config.hidden_dim = 2;
  RelevanceConfig earlier = config;
  earlier.scalar_features = RelevanceConfig::kScalarFeaturesWithoutStanding;
  const RelevanceModel current = perturbed_model(config, 9), older = perturbed_model(earlier, 9);
  DatabaseView other = view;
  other.standing = PoolStanding{};
  const RowMatrix q_hat = unit_rows(1, p, rng);
  EXPECT_NE(current.logits(q_hat.data(), {view})[0], current.logits(q_hat.data(), {other})[0]);
  EXPECT_EQ(older.logits(q_hat.data(), {view})[0], older.logits(q_hat.data(), {other})[0]);
}

TEST(RelevanceGradient, QuestionRowsGradientMatchesFiniteDifferences) {
  omp_set_num_threads(1);
  RelevanceConfig config;
  config.input_dim = 6;
  config.projection_dim = 4;
  config.hidden_dim = 3;
  std::mt19937_64 rng(31);
  RelevanceBatch batch = make_batch(config.input_dim, rng);
  const RelevanceModel model = perturbed_model(config, 31);
  auto cpu = gpu::make_cpu_matrix_multiplier();
  RelevanceParameters gradient(config);
  RowMatrix d_questions;
  model.loss_and_gradient(batch, gradient, *cpu, &d_questions);
  ASSERT_EQ(d_questions.rows(), batch.questions.rows());
  ASSERT_EQ(d_questions.cols(), batch.questions.cols());
  int nonzero = 0;
  for (int64_t i = 0; i < batch.questions.size(); ++i) {
    float& value = batch.questions.data()[i];
    const float original = value;
    constexpr double eps = 1e-3;
    value = static_cast<float>(original + eps);
    const double plus = model.loss(batch, *cpu);
    value = static_cast<float>(original - eps);
    const double minus = model.loss(batch, *cpu);
    value = original;
    const double numeric = (plus - minus) / (2 * eps);
    EXPECT_NEAR(d_questions.data()[i], numeric, 2e-4 + 2e-2 * std::fabs(numeric)) << "question entry " << i;
    nonzero += std::fabs(d_questions.data()[i]) > 1e-6f ? 1 : 0;
  }
  EXPECT_GT(nonzero, batch.questions.size() / 2);
}

TEST(RelevanceGradient, FeatureBackwardMatchesFiniteDifferences) {
  // The feature map alone, with respect to its normalized inputs, in isolation from the rest of the model.
  std::mt19937_64 rng(5);
  const int p = 5, tables = 3;
  RowMatrix q = unit_rows(1, p, rng), card = unit_rows(1, p, rng), t = unit_rows(tables, p, rng);
  RelevanceConfig config;
  config.projection_dim = p;
  const int f = config.feature_dim();
  RowMatrix weights = unit_rows(1, f, rng);  // loss = weights . x
  auto loss = [&]() {
    DatabaseView view{card.data(), t.data(), tables, {0.3f, 0.4f, 0.2f, 0.1f, 0.5f, 1.2f}};
    std::vector<float> x(static_cast<size_t>(f));
    relevance::features_forward(q.data(), view, config, x.data());
    double sum = 0;
    for (int i = 0; i < f; ++i) sum += static_cast<double>(weights(0, i)) * x[static_cast<size_t>(i)];
    return sum;
  };
  DatabaseView view{card.data(), t.data(), tables, {0.3f, 0.4f, 0.2f, 0.1f, 0.5f, 1.2f}};
  std::vector<float> x(static_cast<size_t>(f));
  const int best = relevance::features_forward(q.data(), view, config, x.data());
  EXPECT_FLOAT_EQ(x[11], 0.5f);  // the column and value features, raw and behind the best (0 here)
  EXPECT_FLOAT_EQ(x[12], 1.2f);
  EXPECT_FLOAT_EQ(x[13], 0.5f);
  EXPECT_FLOAT_EQ(x[14], 1.2f);
  RowMatrix dq = RowMatrix::Zero(1, p), dcard = RowMatrix::Zero(1, p), dt = RowMatrix::Zero(tables, p);
  relevance::features_backward(q.data(), view, config, best, weights.data(), dq.data(), dcard.data(), dt.data());
  for (auto [matrix, grad] : {std::pair{&q, &dq}, std::pair{&card, &dcard}, std::pair{&t, &dt}}) {
    for (int64_t i = 0; i < matrix->size(); ++i) {
      const float original = matrix->data()[i];
      matrix->data()[i] = original + 1e-3f;
      const double plus = loss();
      matrix->data()[i] = original - 1e-3f;
      const double minus = loss();
      matrix->data()[i] = original;
      EXPECT_NEAR(grad->data()[i], (plus - minus) / 2e-3, 2e-3);
    }
  }
}

TEST(RelevanceGradient, NormalizeBackwardMatchesFiniteDifferences) {
  std::mt19937_64 rng(9);
  std::normal_distribution<float> normal;
  RowMatrix rows(3, 4), upstream(3, 4);
  for (int64_t i = 0; i < rows.size(); ++i) {
    rows.data()[i] = normal(rng);
    upstream.data()[i] = normal(rng);
  }
  auto loss = [&]() {
    Eigen::VectorXf norms;
    return static_cast<double>(relevance::normalize_rows(rows, norms).cwiseProduct(upstream).sum());
  };
  Eigen::VectorXf norms;
  const RowMatrix normalized = relevance::normalize_rows(rows, norms);
  const RowMatrix grad = relevance::normalize_rows_backward(normalized, norms, upstream);
  for (int64_t i = 0; i < rows.size(); ++i) {
    const float original = rows.data()[i];
    rows.data()[i] = original + 1e-3f;
    const double plus = loss();
    rows.data()[i] = original - 1e-3f;
    const double minus = loss();
    rows.data()[i] = original;
    EXPECT_NEAR(grad.data()[i], (plus - minus) / 2e-3, 1e-3);
  }
}

TEST(RelevanceModel, InferenceMatchesTrainingForward) {
  RelevanceConfig config;
  config.input_dim = 8;
  config.projection_dim = 6;
  config.hidden_dim = 5;
  std::mt19937_64 rng(3);
  const RelevanceBatch batch = make_batch(8, rng);
  const RelevanceModel model = perturbed_model(config, 3);
  const RowMatrix q_hat = model.project_questions(batch.questions);
  const RowMatrix cards_hat = model.project_databases(batch.cards);
  const RowMatrix tables_hat = model.project_databases(batch.tables);
  double loss = 0;
  for (const auto& pair : batch.pairs) {
    DatabaseView view{cards_hat.row(pair.database).data(), tables_hat.row(batch.table_offsets[pair.database]).data(),
                      batch.table_offsets[pair.database + 1] - batch.table_offsets[pair.database], pair.raw,
                      pair.best, pair.standing};
    loss += binary_cross_entropy_with_logit(model.logits(q_hat.row(pair.question).data(), {view})[0], pair.label);
  }
  auto cpu = gpu::make_cpu_matrix_multiplier();
  EXPECT_NEAR(loss / static_cast<double>(batch.pairs.size()), model.loss(batch, *cpu), 1e-5);
}

TEST(RelevanceModel, IdentityInitKeepsCosines) {
  RelevanceConfig config;
  config.input_dim = 16;
  config.projection_dim = 16;
  RelevanceModel model(config, 0);
  std::mt19937_64 rng(1);
  const RowMatrix rows = unit_rows(4, 16, rng);
  EXPECT_TRUE(model.project_questions(rows).isApprox(rows, 1e-6f));
  config.projection_dim = 8;  // narrower: orthonormal rows, so a row's projection is no longer than the row
  RelevanceModel narrow(config, 0);
  const RowMatrix w = narrow.parameters().question_projection();
  EXPECT_TRUE((w * w.transpose()).isApprox(RowMatrix::Identity(8, 8), 1e-5f));
}

TEST(RelevanceModel, BinaryCrossEntropyIsStable) {
  EXPECT_NEAR(binary_cross_entropy_with_logit(0.0f, 1.0f), std::log(2.0f), 1e-6);
  EXPECT_NEAR(binary_cross_entropy_with_logit(100.0f, 1.0f), 0.0f, 1e-6);
  EXPECT_NEAR(binary_cross_entropy_with_logit(-100.0f, 1.0f), 100.0f, 1e-3);
  EXPECT_TRUE(std::isfinite(binary_cross_entropy_with_logit(1e4f, 0.0f)));
  EXPECT_NEAR(sigmoid(-1000.0f), 0.0f, 1e-12);
  EXPECT_NEAR(sigmoid(1000.0f), 1.0f, 1e-6);
}

TEST(RelevanceModel, BadBatchesAreRefused) {
  RelevanceConfig config;
  config.input_dim = 4;
  config.projection_dim = 4;
  config.hidden_dim = 2;
  RelevanceModel model(config, 0);
  auto cpu = gpu::make_cpu_matrix_multiplier();
  std::mt19937_64 rng(0);
  RelevanceBatch batch = make_batch(4, rng);
  batch.pairs[0].database = 9;
  EXPECT_THROW(model.loss(batch, *cpu), Error);
  batch = make_batch(4, rng);
  batch.table_offsets = {0, 1, 1, 6, 8};  // a database without table rows
  EXPECT_THROW(model.loss(batch, *cpu), Error);
  batch = make_batch(5, rng);  // wrong dimension
  EXPECT_THROW(model.loss(batch, *cpu), Error);
  RelevanceParameters wrong(RelevanceConfig{4, 3, 2, ""});
  EXPECT_THROW(model.loss_and_gradient(make_batch(4, rng), wrong, *cpu), Error);
  EXPECT_THROW(model.set_threshold(1.5f), Error);
  EXPECT_THROW(RelevanceModel(RelevanceConfig{0, 4, 2, ""}, 0), Error);
}

TEST(RelevanceModel, CudaDeviceWithoutCudaIsAClearError) {
  if (gpu::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  try {
    gpu::make_matrix_multiplier("cuda");
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
  }
}

class RelevanceModelFile : public ::testing::Test {
 protected:
  relmem_test::TempDir dir;
  RelevanceConfig config{8, 4, 3, "hashing:8", "hashing:64"};
};

TEST_F(RelevanceModelFile, RoundTrip) {
  RelevanceModel model = perturbed_model(config, 4);
  model.set_threshold(0.37f);
  model.set_training_info_json(R"({"epochs": 3})");
  const std::string path = dir.file("m.model");
  model.save(path);
  const RelevanceModel loaded = RelevanceModel::load(path);
  EXPECT_EQ(loaded.config().input_dim, 8);
  EXPECT_EQ(loaded.config().projection_dim, 4);
  EXPECT_EQ(loaded.config().hidden_dim, 3);
  EXPECT_EQ(loaded.config().encoder, "hashing:8");
  EXPECT_EQ(loaded.config().lexical_encoder, "hashing:64");
  EXPECT_FLOAT_EQ(loaded.threshold(), 0.37f);
  EXPECT_NE(loaded.training_info_json().find("\"epochs\":3"), std::string::npos);
  EXPECT_EQ(loaded.parameters().values(), model.parameters().values());
}

TEST_F(RelevanceModelFile, RoundTripWithAFineTunedEncoderTop) {
  RelevanceModel model = perturbed_model(config, 5);
  UseLiteTopShape shape;
  shape.layers.push_back({8, 8, 2, 3, 5, 0.5f});
  shape.output_width = 8;  // the model's input_dim
  shape.norm_epsilon = 1e-6f;
  shape.l2_epsilon = 1e-12f;
  std::vector<float> values(static_cast<size_t>(shape.parameter_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.001f * static_cast<float>(i % 97);
  model.set_encoder_top(UseLiteTop(shape, values));
  const std::string path = dir.file("tuned.model");
  model.save(path);
  const RelevanceModel loaded = RelevanceModel::load(path);
  ASSERT_TRUE(loaded.fine_tunes_encoder());
  EXPECT_TRUE(loaded.encoder_top().shape() == shape);
  EXPECT_EQ(loaded.encoder_top().parameters(), values);
  EXPECT_EQ(loaded.parameters().values(), model.parameters().values());
  perturbed_model(config, 4).save(dir.file("frozen.model"));
  EXPECT_FALSE(RelevanceModel::load(dir.file("frozen.model")).fine_tunes_encoder());
}

// A version 1 file (before fine-tuned encoder layers) written byte by byte still loads.
TEST_F(RelevanceModelFile, VersionOneFilesStillLoad) {
  RelevanceConfig old_config = config;
  old_config.scalar_features = RelevanceConfig::kScalarFeaturesWithoutColumnsAndValues;
  const RelevanceModel model = perturbed_model(old_config, 6);
  const std::string header = R"({"format":"relmem-relevance-model","version":1,"input_dim":8,"projection_dim":4,)"
                             R"("hidden_dim":3,"encoder":"hashing:8","lexical_encoder":"hashing:64","threshold":0.25})";
  std::string bytes = "RMRM";
  auto append = [&bytes](const auto& value) { bytes.append(reinterpret_cast<const char*>(&value), sizeof value); };
  append(uint32_t{1});
  append(static_cast<uint64_t>(header.size()));
  bytes += header;
  const auto& values = model.parameters().values();
  append(static_cast<uint64_t>(values.size()));
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  append(hash);
  relmem_test::write_bytes(dir.file("v1.model"), bytes);
  const RelevanceModel loaded = RelevanceModel::load(dir.file("v1.model"));
  EXPECT_FALSE(loaded.fine_tunes_encoder());
  EXPECT_EQ(loaded.parameters().values(), values);
  EXPECT_EQ(loaded.config().scalar_features, RelevanceConfig::kScalarFeaturesWithoutColumnsAndValues);
  EXPECT_FLOAT_EQ(loaded.threshold(), 0.25f);
}

// The version 3 layout is fixed: files written by earlier builds must keep loading.
TEST_F(RelevanceModelFile, FileBytesFollowTheDocumentedLayout) {
  RelevanceModel model = perturbed_model(config, 7);
  model.set_threshold(0.25f);
  model.set_training_info_json(R"({"epochs": 3})");
  const std::string header = R"({"encoder":"hashing:8","encoder_top":null,"format":"relmem-relevance-model",)"
                             R"("hidden_dim":3,"input_dim":8,"lexical_encoder":"hashing:64","projection_dim":4,)"
                             R"("scalar_features":35,"threshold":0.25,"training":{"epochs":3},"version":3})";
  std::string expected = "RMRM";
  auto append = [&](const auto& value) { expected.append(reinterpret_cast<const char*>(&value), sizeof value); };
  append(uint32_t{3});
  append(static_cast<uint64_t>(header.size()));
  expected += header;
  const auto& values = model.parameters().values();
  append(static_cast<uint64_t>(values.size()));
  for (float value : values) append(value);
  append(uint64_t{0});                        // no fine-tuned encoder top
  uint64_t checksum = 0xcbf29ce484222325ULL;  // FNV-1a of every byte before it
  for (char c : expected) checksum = (checksum ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  append(checksum);
  model.save(dir.file("m.model"));
  EXPECT_EQ(relmem_test::read_bytes(dir.file("m.model")), expected);
}

// Files of the 21-feature layout (before the pool standing, as models/relevance-use-lite.model was first shipped)
// load as such; a feature count no build wrote is refused by name.
TEST_F(RelevanceModelFile, EarlierFeatureLayoutsLoadAndUnknownOnesAreRefused) {
  RelevanceConfig earlier = config;
  earlier.scalar_features = RelevanceConfig::kScalarFeaturesWithoutStanding;
  const RelevanceModel model = perturbed_model(earlier, 10);
  const std::string path = dir.file("earlier.model");
  model.save(path);
  const RelevanceModel loaded = RelevanceModel::load(path);
  EXPECT_EQ(loaded.config().scalar_features, RelevanceConfig::kScalarFeaturesWithoutStanding);
  EXPECT_EQ(loaded.parameters().values(), model.parameters().values());

  std::string bytes = relmem_test::read_bytes(path);
  const size_t at = bytes.find(R"("scalar_features":21)");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 20, R"("scalar_features":22)");
  bytes.resize(bytes.size() - sizeof(uint64_t));
  uint64_t checksum = 0xcbf29ce484222325ULL;
  for (char c : bytes) checksum = (checksum ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  bytes.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  relmem_test::write_bytes(path, bytes);
  try {
    RelevanceModel::load(path);
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("22 scalar features"), std::string::npos) << e.what();
  }
}

TEST(ShippedRelevanceModel, Loads) {
  const std::string path = std::string(RELMEM_SOURCE_DIR) + "/models/relevance-use-lite.model";
  const RelevanceModel model = RelevanceModel::load(path);
  EXPECT_EQ(model.config().encoder, "use-lite");
  EXPECT_GE(model.config().scalar_features, RelevanceConfig::kScalarFeaturesWithoutStanding);
}

TEST_F(RelevanceModelFile, DamagedFilesGiveClearErrors) {
  const std::string path = dir.file("m.model");
  perturbed_model(config, 4).save(path);
  const std::string bytes = relmem_test::read_bytes(path);
  auto expect_error = [&](const std::string& content, const std::string& fragment) {
    relmem_test::write_bytes(path, content);
    try {
      RelevanceModel::load(path);
      FAIL() << "expected relmem::Error containing '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  expect_error(flipped, "corrupt");
  expect_error(bytes.substr(0, bytes.size() - 20), "");
  expect_error("not a model at all", "bad magic");
  expect_error("", "bad magic");
  std::string newer = bytes;
  newer[4] = 9;
  expect_error(newer, "version 9");
  EXPECT_THROW(RelevanceModel::load(dir.file("missing.model")), Error);
}
