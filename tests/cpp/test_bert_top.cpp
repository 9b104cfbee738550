// The fine-tunable BERT top against central finite differences in double precision on tiny random sizes: GELU, one
// and two post-norm layers with mean pooling and L2 normalization, and the card-cosine head's pair loss.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "test_gradient_check.hpp"
#include "relmem/encoders/finetuning/bert_top.hpp"
#include "relmem/memories/training/card_relevance_training.hpp"

using namespace relmem;
using backprop::Matrix;
using namespace relmem_test;

namespace {

// Ragged sentences of 3, 1, 5 and 2 tokens.
const std::vector<int> kOffsets = {0, 3, 4, 9, 11};

BertTopShape tiny_shape(int layers) {
  BertTopShape shape;
  shape.layers = layers;
  shape.width = 8;
  shape.heads = 2;
  shape.hidden = 12;
  shape.norm_epsilon = 1e-12f;
  return shape;
}

// Random weights around BERT's: layer-norm gains near 1, the rest small.
std::vector<double> random_parameters(const BertTopShape& shape, std::mt19937_64& rng) {
  std::vector<double> values(static_cast<size_t>(shape.parameter_count()));
  std::normal_distribution<double> normal(0.0, 0.3);
  for (double& v : values) v = normal(rng);
  for (int layer = 0; layer < shape.layers; ++layer) {
    for (const auto& t : bert_layer_tensors(shape)) {
      if (t.name.find("LayerNorm") == std::string::npos || t.kind != "weight") continue;
      for (int64_t i = 0; i < t.shape[0]; ++i) values[layer * shape.layer_parameter_count() + t.offset + i] += 1.0;
    }
  }
  return values;
}

void check_top(int layers) {
  std::mt19937_64 rng(layers);
  const BertTopShape shape = tiny_shape(layers);
  std::vector<double> parameters = random_parameters(shape, rng);
  MatrixD tokens = random_matrix(kOffsets.back(), shape.width, rng);
  const MatrixD weights = random_matrix(static_cast<int>(kOffsets.size()) - 1, shape.width, rng);
  auto loss = [&]() {
    BertTopCache<double> cache;
    return top_forward<double>(shape, parameters.data(), tokens, kOffsets, cache).cwiseProduct(weights).sum();
  };
  BertTopCache<double> cache;
  top_forward<double>(shape, parameters.data(), tokens, kOffsets, cache);
  std::vector<double> d_parameters(parameters.size(), 0.0);
  const MatrixD d_tokens = top_backward<double>(shape, parameters.data(), cache, weights, d_parameters.data());
  expect_gradient(loss, parameters.data(), static_cast<int64_t>(parameters.size()), d_parameters.data(), "parameters");
  expect_gradient(loss, tokens.data(), tokens.size(), d_tokens.data(), "tokens");
}

}  // namespace

TEST(BertTop, GeluBackwardMatchesFiniteDifferences) {
  std::mt19937_64 rng(3);
  MatrixD x = random_matrix(4, 5, rng, 2.0);
  const MatrixD weights = random_matrix(4, 5, rng);
  auto loss = [&]() { return backprop::gelu_forward<double>(x).cwiseProduct(weights).sum(); };
  const MatrixD analytic = backprop::gelu_backward<double>(x, weights);
  expect_gradient(loss, x.data(), x.size(), analytic.data(), "gelu");
  EXPECT_NEAR(backprop::gelu_forward<double>(MatrixD::Constant(1, 1, 1.0))(0, 0), 0.8413447460685429, 1e-12);
}

TEST(BertTop, OneLayerWithPoolingMatchesFiniteDifferences) { check_top(1); }

TEST(BertTop, TwoLayersMatchFiniteDifferences) { check_top(2); }

TEST(BertTop, PairLossMatchesFiniteDifferences) {
  std::mt19937_64 rng(5);
  RowMatrix vectors = random_matrix(5, 6, rng).cast<float>();
  vectors.rowwise().normalize();
  const std::vector<VectorPair> pairs = {{0, 3, 1.0f}, {0, 4, 0.0f}, {1, 3, 0.0f}, {2, 4, 1.0f}, {1, 2, 0.0f}};
  CardRelevanceHead head{7.0f, -2.5f};
  RowMatrix d_vectors = RowMatrix::Zero(5, 6);
  double d_head[2] = {0.0, 0.0};
  pair_loss_and_gradient(vectors, pairs, head, d_vectors, d_head);
  // Differences of a float computation need a wider step and tolerance.
  constexpr float kStep = 1e-3f;
  auto loss = [&]() {
    RowMatrix unused = RowMatrix::Zero(5, 6);
    double unused_head[2] = {0.0, 0.0};
    return pair_loss_and_gradient(vectors, pairs, head, unused, unused_head);
  };
  for (int64_t i = 0; i < vectors.size(); ++i) {
    const float original = vectors.data()[i];
    vectors.data()[i] = original + kStep;
    const double plus = loss();
    vectors.data()[i] = original - kStep;
    const double minus = loss();
    vectors.data()[i] = original;
    EXPECT_NEAR(d_vectors.data()[i], (plus - minus) / (2 * kStep), 2e-4) << "vector entry " << i;
  }
  for (int k = 0; k < 2; ++k) {
    float& value = k == 0 ? head.scale : head.bias;
    const float original = value;
    value = original + kStep;
    const double plus = loss();
    value = original - kStep;
    const double minus = loss();
    value = original;
    EXPECT_NEAR(d_head[k], (plus - minus) / (2 * kStep), 2e-4) << "head entry " << k;
  }
  EXPECT_GT(d_vectors.cwiseAbs().maxCoeff(), 1e-3f);
}

TEST(BertTop, ShapeAndParameterCountAreChecked) {
  EXPECT_EQ(tiny_shape(2).parameter_count(), 2 * (3 * 64 + 24 + 64 + 8 + 16 + 96 + 12 + 96 + 8 + 16));
  EXPECT_THROW(BertTop(tiny_shape(1), std::vector<float>(3)), Error);
  BertTopShape odd = tiny_shape(1);
  odd.heads = 3;
  EXPECT_THROW(odd.validate(), Error);
  BertTop top(tiny_shape(1), std::vector<float>(static_cast<size_t>(tiny_shape(1).parameter_count()), 0.1f));
  TokenStates states;
  states.rows = RowMatrix::Zero(2, 5);
  states.offsets = {0, 2};
  EXPECT_THROW(top.encode(states), Error);  // 5-wide states for an 8-wide top
}

TEST(BertTop, FloatPassesAgreeWithDouble) {
  std::mt19937_64 rng(11);
  BertTopShape shape = tiny_shape(2);
  shape.width = 16;  // the products' full AVX-512 width
  shape.heads = 4;
  shape.hidden = 24;
  const std::vector<double> parameters = random_parameters(shape, rng);
  const MatrixD tokens = random_matrix(kOffsets.back(), shape.width, rng);
  const MatrixD weights = random_matrix(static_cast<int>(kOffsets.size()) - 1, shape.width, rng);
  BertTopCache<double> cache;
  const MatrixD vectors = top_forward<double>(shape, parameters.data(), tokens, kOffsets, cache);
  std::vector<double> expected(parameters.size(), 0.0);
  top_backward<double>(shape, parameters.data(), cache, weights, expected.data());

  BertTop top(shape, std::vector<float>(parameters.begin(), parameters.end()));
  TokenStates states;
  states.rows = tokens.cast<float>();
  states.offsets = kOffsets;
  BertTopCache<float> float_cache;
  EXPECT_LT((top.forward(states, float_cache).cast<double>() - vectors).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT((top.encode(states).cast<double>() - vectors).cwiseAbs().maxCoeff(), 1e-5);
  std::vector<float> gradient(parameters.size(), 0.0f);
  top.backward(float_cache, weights.cast<float>(), gradient);
  double error = 0.0, norm = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    error += (gradient[i] - expected[i]) * (gradient[i] - expected[i]);
    norm += expected[i] * expected[i];
  }
  EXPECT_LT(std::sqrt(error / norm), 1e-5);
  EXPECT_NE(gradient[0], gradient[1]);
}
