// The fine-tunable USE-lite top: every backward pass (linear, layer norm, attention over ragged sentences, FFN,
// mean pooling, tanh, L2 normalization and the whole top, one and two layers) against central finite differences
// in double precision on tiny random sizes, and the float products against Eigen.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "test_gradient_check.hpp"
#include "relmem/encoders/finetuning/transformer_backprop.hpp"
#include "relmem/encoders/finetuning/use_lite_top.hpp"

using namespace relmem;
using backprop::Matrix;
using namespace relmem_test;

namespace {

// loss = sum(weights ⊙ y): its gradient with respect to y is `weights`.
double weighted_sum(const MatrixD& y, const MatrixD& weights) { return y.cwiseProduct(weights).sum(); }

// Ragged sentences of 3, 0, 4 and 1 tokens.
const std::vector<int> kOffsets = {0, 3, 3, 7, 8};

}  // namespace

TEST(TransformerBackprop, Linear) {
  std::mt19937_64 rng(1);
  MatrixD x = random_matrix(5, 4, rng);
  std::vector<double> w = random_vector(4 * 3, rng), b = random_vector(3, rng);
  const MatrixD r = random_matrix(5, 3, rng);
  std::vector<double> dw(w.size(), 0.0), db(b.size(), 0.0);
  const MatrixD dx = backprop::linear_backward<double>(x, w.data(), r, dw.data(), db.data());
  auto loss = [&] { return weighted_sum(backprop::linear_forward<double>(x, w.data(), b.data(), 3), r); };
  expect_gradient(loss, x.data(), x.size(), dx.data(), "x");
  expect_gradient(loss, w.data(), static_cast<int64_t>(w.size()), dw.data(), "weights");
  expect_gradient(loss, b.data(), static_cast<int64_t>(b.size()), db.data(), "bias");
}

TEST(TransformerBackprop, LayerNorm) {
  std::mt19937_64 rng(2);
  MatrixD x = random_matrix(5, 6, rng, 2.0);
  std::vector<double> gain = random_vector(6, rng), bias = random_vector(6, rng);
  const MatrixD r = random_matrix(5, 6, rng);
  backprop::LayerNormCache<double> cache;
  backprop::layer_norm_forward<double>(x, gain.data(), bias.data(), 1e-3, cache);
  std::vector<double> d_gain(6, 0.0), d_bias(6, 0.0);
  const MatrixD dx = backprop::layer_norm_backward<double>(cache, gain.data(), r, d_gain.data(), d_bias.data());
  auto loss = [&] {
    backprop::LayerNormCache<double> c;
    return weighted_sum(backprop::layer_norm_forward<double>(x, gain.data(), bias.data(), 1e-3, c), r);
  };
  expect_gradient(loss, x.data(), x.size(), dx.data(), "x");
  expect_gradient(loss, gain.data(), 6, d_gain.data(), "gain");
  expect_gradient(loss, bias.data(), 6, d_bias.data(), "bias");
}

TEST(TransformerBackprop, AttentionOverRaggedSentences) {
  std::mt19937_64 rng(3);
  const backprop::AttentionShape shape{2, 3, 0.7};
  MatrixD qkv = random_matrix(kOffsets.back(), 3 * 6, rng);
  const MatrixD r = random_matrix(kOffsets.back(), 6, rng);
  backprop::AttentionCache<double> cache;
  backprop::attention_forward<double>(qkv, kOffsets, shape, cache);
  const MatrixD d_qkv = backprop::attention_backward<double>(qkv, kOffsets, shape, cache, r);
  auto loss = [&] {
    backprop::AttentionCache<double> c;
    return weighted_sum(backprop::attention_forward<double>(qkv, kOffsets, shape, c), r);
  };
  expect_gradient(loss, qkv.data(), qkv.size(), d_qkv.data(), "qkv");
}

TEST(TransformerBackprop, AttentionKeepsSentencesApart) {
  std::mt19937_64 rng(4);
  const backprop::AttentionShape shape{2, 3, 0.7};
  MatrixD qkv = random_matrix(kOffsets.back(), 3 * 6, rng);
  backprop::AttentionCache<double> cache;
  const MatrixD before = backprop::attention_forward<double>(qkv, kOffsets, shape, cache);
  qkv.middleRows(3, 4) = random_matrix(4, 3 * 6, rng);  // the third sentence only
  const MatrixD after = backprop::attention_forward<double>(qkv, kOffsets, shape, cache);
  EXPECT_EQ(before.topRows(3), after.topRows(3));
  EXPECT_EQ(before.bottomRows(1), after.bottomRows(1));
  EXPECT_NE(before.middleRows(3, 4), after.middleRows(3, 4));
}

TEST(TransformerBackprop, Ffn) {
  std::mt19937_64 rng(5);
  MatrixD x = random_matrix(6, 4, rng);
  std::vector<double> w1 = random_vector(4 * 7, rng), b1 = random_vector(7, rng), w2 = random_vector(7 * 4, rng),
                      b2 = random_vector(4, rng);
  const MatrixD r = random_matrix(6, 4, rng);
  backprop::FfnCache<double> cache;
  backprop::ffn_forward<double>(x, w1.data(), b1.data(), w2.data(), b2.data(), 7, 4, cache);
  std::vector<double> dw1(w1.size(), 0.0), db1(b1.size(), 0.0), dw2(w2.size(), 0.0), db2(b2.size(), 0.0);
  const MatrixD dx = backprop::ffn_backward<double>(x, w1.data(), w2.data(), cache, r, dw1.data(), db1.data(),
                                                    dw2.data(), db2.data());
  auto loss = [&] {
    backprop::FfnCache<double> c;
    return weighted_sum(backprop::ffn_forward<double>(x, w1.data(), b1.data(), w2.data(), b2.data(), 7, 4, c), r);
  };
  expect_gradient(loss, x.data(), x.size(), dx.data(), "x");
  expect_gradient(loss, w1.data(), static_cast<int64_t>(w1.size()), dw1.data(), "w1");
  expect_gradient(loss, b1.data(), static_cast<int64_t>(b1.size()), db1.data(), "b1");
  expect_gradient(loss, w2.data(), static_cast<int64_t>(w2.size()), dw2.data(), "w2");
  expect_gradient(loss, b2.data(), static_cast<int64_t>(b2.size()), db2.data(), "b2");
}

TEST(TransformerBackprop, MeanPooling) {
  std::mt19937_64 rng(6);
  MatrixD rows = random_matrix(kOffsets.back(), 5, rng);
  const MatrixD r = random_matrix(4, 5, rng);
  const MatrixD pooled = backprop::mean_pool_forward<double>(rows, kOffsets);
  EXPECT_EQ(pooled.row(1), MatrixD::Zero(1, 5)) << "a sentence without tokens pools to zero";
  const MatrixD d_rows = backprop::mean_pool_backward<double>(r, kOffsets);
  auto loss = [&] { return weighted_sum(backprop::mean_pool_forward<double>(rows, kOffsets), r); };
  expect_gradient(loss, rows.data(), rows.size(), d_rows.data(), "rows");
}

TEST(TransformerBackprop, Tanh) {
  std::mt19937_64 rng(7);
  MatrixD z = random_matrix(3, 5, rng);
  const MatrixD r = random_matrix(3, 5, rng);
  const MatrixD dz = backprop::tanh_backward<double>(z.array().tanh().matrix(), r);
  auto loss = [&] { return weighted_sum(z.array().tanh().matrix(), r); };
  expect_gradient(loss, z.data(), z.size(), dz.data(), "z");
}

TEST(TransformerBackprop, L2Normalize) {
  std::mt19937_64 rng(8);
  MatrixD y = random_matrix(4, 5, rng);
  y.row(3) *= 1e-3;  // |y|^2 below epsilon: the norm is clamped
  const double epsilon = 1e-4;
  const MatrixD r = random_matrix(4, 5, rng);
  const MatrixD out = backprop::l2_normalize_forward<double>(y, epsilon);
  EXPECT_NEAR(out.row(0).norm(), 1.0, 1e-12);
  EXPECT_LT(out.row(3).norm(), 0.5);
  const MatrixD dy = backprop::l2_normalize_backward<double>(y, epsilon, r);
  auto loss = [&] { return weighted_sum(backprop::l2_normalize_forward<double>(y, epsilon), r); };
  expect_gradient(loss, y.data(), y.size(), dy.data(), "y");
}

namespace {

UseLiteTopShape tiny_shape(int layers) {
  UseLiteTopShape shape;
  // Like USE-lite: the bottom layer widens its input (residual projection), the top one keeps its width.
  if (layers == 2) shape.layers.push_back({4, 6, 2, 2, 5, 0.6f});
  shape.layers.push_back({6, 6, 2, 3, 7, 0.5f});
  shape.output_width = 3;
  shape.norm_epsilon = 1e-3f;
  shape.l2_epsilon = 1e-6f;
  return shape;
}

void expect_top_gradient(int layers, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const UseLiteTopShape shape = tiny_shape(layers);
  std::vector<double> parameters = random_vector(shape.parameter_count(), rng, 0.5);
  MatrixD tokens = random_matrix(kOffsets.back(), shape.input_width(), rng);
  const MatrixD r = random_matrix(4, 3, rng);
  TopCache<double> cache;
  const MatrixD vectors = top_forward<double>(shape, parameters.data(), tokens, kOffsets, cache);
  ASSERT_EQ(vectors.rows(), 4);
  EXPECT_NEAR(vectors.row(0).norm(), 1.0, 1e-12);
  std::vector<double> gradient(parameters.size(), 0.0);
  const MatrixD d_tokens = top_backward<double>(shape, parameters.data(), cache, r, gradient.data());
  auto loss = [&] {
    TopCache<double> c;
    return weighted_sum(top_forward<double>(shape, parameters.data(), tokens, kOffsets, c), r);
  };
  expect_gradient(loss, parameters.data(), static_cast<int64_t>(parameters.size()), gradient.data(), "parameters");
  expect_gradient(loss, tokens.data(), tokens.size(), d_tokens.data(), "tokens");
}

}  // namespace

TEST(TransformerBackprop, WholeTopLayer) { expect_top_gradient(1, 9); }

TEST(TransformerBackprop, TwoTopLayersWithResidualProjection) { expect_top_gradient(2, 10); }

TEST(TransformerBackprop, FloatTopAgreesWithDouble) {
  std::mt19937_64 rng(11);
  const UseLiteTopShape shape = tiny_shape(2);
  const std::vector<double> parameters = random_vector(shape.parameter_count(), rng, 0.5);
  const MatrixD tokens = random_matrix(kOffsets.back(), shape.input_width(), rng);
  TopCache<double> cache;
  const MatrixD expected = top_forward<double>(shape, parameters.data(), tokens, kOffsets, cache);
  UseLiteTop top(shape, std::vector<float>(parameters.begin(), parameters.end()));
  TokenStates states;
  states.rows = tokens.cast<float>();
  states.offsets = kOffsets;
  EXPECT_LT((top.encode(states).cast<double>() - expected).cwiseAbs().maxCoeff(), 1e-5);
  TopCache<float> float_cache;
  EXPECT_LT((top.forward(states, float_cache).cast<double>() - expected).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(TransformerBackprop, FloatProductsMatchEigen) {
  std::mt19937_64 rng(12);
  const RowMatrix a = random_matrix(37, 21, rng).cast<float>();
  const RowMatrix b = random_matrix(21, 45, rng).cast<float>();
  const RowMatrix at = a.transpose(), bt = b.transpose();
  const RowMatrix expected = a * b;
  EXPECT_LT((backprop::multiply<float>(a, false, b, false) - expected).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT((backprop::multiply<float>(at, true, b, false) - expected).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT((backprop::multiply<float>(a, false, bt, true) - expected).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT((backprop::multiply<float>(at, true, bt, true) - expected).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_EQ(backprop::multiply<float>(RowMatrix(3, 0), false, RowMatrix(0, 4), false), RowMatrix::Zero(3, 4));
}

TEST(UseLiteTopShape, BadShapesAndStatesAreRefused) {
  UseLiteTopShape shape = tiny_shape(2);
  shape.layers[1].input_width = 5;  // does not take the bottom layer's width
  EXPECT_THROW(shape.validate(), Error);
  EXPECT_THROW(UseLiteTop(tiny_shape(1), std::vector<float>(3)), Error);
  UseLiteTop top(tiny_shape(1), std::vector<float>(static_cast<size_t>(tiny_shape(1).parameter_count()), 0.1f));
  TokenStates states;
  states.rows = RowMatrix::Zero(3, 5);  // wrong width
  states.offsets = {0, 3};
  EXPECT_THROW(top.encode(states), Error);
  states.rows = RowMatrix::Zero(3, 6);
  states.offsets = {0, 4};  // past the rows
  EXPECT_THROW(top.encode(states), Error);
  EXPECT_THROW(states.select({2}), Error);
  EXPECT_THROW(UseLiteTop().encode(states), Error);
}
