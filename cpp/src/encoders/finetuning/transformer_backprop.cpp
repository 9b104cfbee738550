#include "relmem/encoders/finetuning/transformer_backprop.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "../../linalg/packed_gemm.hpp"

namespace relmem::backprop {
namespace {

template <typename S>
using Map = Eigen::Map<Matrix<S>>;
template <typename S>
using RowVector = Eigen::Matrix<S, 1, Eigen::Dynamic>;

int sentence_count(const std::vector<int>& offsets) { return static_cast<int>(offsets.size()) - 1; }

}  // namespace

template <typename S>
Matrix<S> multiply(const Eigen::Ref<const Matrix<S>>& a, bool transpose_a, const Eigen::Ref<const Matrix<S>>& b,
                   bool transpose_b) {
  const auto m = transpose_a ? a.cols() : a.rows();
  const auto k = transpose_a ? a.rows() : a.cols();
  const auto n = transpose_b ? b.rows() : b.cols();
  if constexpr (std::is_same_v<S, float>) {
    Matrix<S> out = Matrix<S>::Zero(m, n);
    if (m == 0 || n == 0 || k == 0) return out;
    Matrix<S> a_copy;
    const float* a_data = a.data();
    int64_t lda = a.outerStride();
    if (transpose_a) {
      a_copy = a.transpose();
      a_data = a_copy.data();
      lda = a_copy.cols();
    }
    thread_local gemm::PackedMatrix packed;
    if (transpose_b) {
      packed.pack(b.data(), static_cast<int>(k), static_cast<int>(n), 1, b.outerStride());
    } else {
      packed.pack(b.data(), static_cast<int>(k), static_cast<int>(n), b.outerStride(), 1);
    }
    gemm::multiply(a_data, static_cast<int>(m), lda, packed, out.data(), n);
    return out;
  } else {
    if (transpose_a && transpose_b) return a.transpose() * b.transpose();
    if (transpose_a) return a.transpose() * b;
    if (transpose_b) return a * b.transpose();
    return a * b;
  }
}

template <typename S>
Matrix<S> linear_forward(const Matrix<S>& x, const S* weights, const S* bias, int out) {
  Matrix<S> y = multiply<S>(x, false, ConstMap<S>(weights, x.cols(), out), false);
  y.rowwise() += Eigen::Map<const RowVector<S>>(bias, out);
  return y;
}

template <typename S>
Matrix<S> linear_backward(const Matrix<S>& x, const S* weights, const Matrix<S>& dy, S* d_weights, S* d_bias) {
  const auto in = x.cols(), out = dy.cols();
  Map<S>(d_weights, in, out) += multiply<S>(x, true, dy, false);
  Eigen::Map<RowVector<S>>(d_bias, out) += dy.colwise().sum();
  return multiply<S>(dy, false, ConstMap<S>(weights, in, out), true);
}

template <typename S>
Matrix<S> layer_norm_forward(const Matrix<S>& x, const S* gain, const S* bias, S epsilon, LayerNormCache<S>& cache) {
  const auto width = x.cols();
  cache.normalized = x.colwise() - x.rowwise().mean();
  cache.inverse_deviation =
      ((cache.normalized.array().square().rowwise().sum() / static_cast<S>(width)) + epsilon).rsqrt().matrix();
  cache.normalized = cache.inverse_deviation.asDiagonal() * cache.normalized;
  Matrix<S> y = cache.normalized * Eigen::Map<const Column<S>>(gain, width).asDiagonal();
  y.rowwise() += Eigen::Map<const RowVector<S>>(bias, width);
  return y;
}

template <typename S>
Matrix<S> layer_norm_backward(const LayerNormCache<S>& cache, const S* gain, const Matrix<S>& dy, S* d_gain,
                              S* d_bias) {
  const auto width = dy.cols();
  Eigen::Map<RowVector<S>>(d_gain, width) += dy.cwiseProduct(cache.normalized).colwise().sum();
  Eigen::Map<RowVector<S>>(d_bias, width) += dy.colwise().sum();
  // dx = r (g - mean(g) - x̂ mean(g x̂)) with g = dy * gain, per row.
  const Matrix<S> d_normalized = dy * Eigen::Map<const Column<S>>(gain, width).asDiagonal();
  const Column<S> mean_d = d_normalized.rowwise().mean();
  const Column<S> mean_dx = d_normalized.cwiseProduct(cache.normalized).rowwise().mean();
  Matrix<S> dx = d_normalized.colwise() - mean_d;
  dx -= mean_dx.asDiagonal() * cache.normalized;
  return cache.inverse_deviation.asDiagonal() * dx;
}

template <typename S>
Matrix<S> attention_forward(const Matrix<S>& qkv, const std::vector<int>& offsets, const AttentionShape& shape,
                            AttentionCache<S>& cache) {
  const int width = shape.heads * shape.head_width;
  const int sentences = sentence_count(offsets);
  const S scale = static_cast<S>(shape.scale);
  Matrix<S> context(qkv.rows(), width);
  cache.weights.assign(static_cast<size_t>(sentences) * shape.heads, Matrix<S>());
#pragma omp parallel for schedule(dynamic) if (!omp_in_parallel() && sentences > 1)
  for (int s = 0; s < sentences; ++s) {
    const int begin = offsets[s], length = offsets[s + 1] - offsets[s];
    for (int h = 0; h < shape.heads; ++h) {
      const int column = h * shape.head_width;
      const auto q = qkv.block(begin, column, length, shape.head_width);
      const auto k = qkv.block(begin, width + column, length, shape.head_width);
      const auto v = qkv.block(begin, 2 * width + column, length, shape.head_width);
      Matrix<S>& weights = cache.weights[static_cast<size_t>(s) * shape.heads + h];
      weights = scale * (q * k.transpose());
      for (int i = 0; i < length; ++i) {
        auto row = weights.row(i).array();
        row = (row - row.maxCoeff()).exp();
        row /= row.sum();
      }
      context.block(begin, column, length, shape.head_width) = weights * v;
    }
  }
  return context;
}

template <typename S>
Matrix<S> attention_backward(const Matrix<S>& qkv, const std::vector<int>& offsets, const AttentionShape& shape,
                             const AttentionCache<S>& cache, const Matrix<S>& d_context) {
  const int width = shape.heads * shape.head_width;
  const int sentences = sentence_count(offsets);
  const S scale = static_cast<S>(shape.scale);
  Matrix<S> d_qkv(qkv.rows(), qkv.cols());
#pragma omp parallel for schedule(dynamic) if (!omp_in_parallel() && sentences > 1)
  for (int s = 0; s < sentences; ++s) {
    const int begin = offsets[s], length = offsets[s + 1] - offsets[s];
    for (int h = 0; h < shape.heads; ++h) {
      const int column = h * shape.head_width;
      const auto q = qkv.block(begin, column, length, shape.head_width);
      const auto k = qkv.block(begin, width + column, length, shape.head_width);
      const auto v = qkv.block(begin, 2 * width + column, length, shape.head_width);
      const auto dc = d_context.block(begin, column, length, shape.head_width);
      const Matrix<S>& weights = cache.weights[static_cast<size_t>(s) * shape.heads + h];
      d_qkv.block(begin, 2 * width + column, length, shape.head_width) = weights.transpose() * dc;
      const Matrix<S> d_weights = dc * v.transpose();
      // softmax backward: dS = P ⊙ (dP - rowsum(dP ⊙ P)), then the logits' scale.
      const Column<S> inner = d_weights.cwiseProduct(weights).rowwise().sum();
      const Matrix<S> d_logits = scale * weights.cwiseProduct(d_weights - inner.replicate(1, length));
      d_qkv.block(begin, column, length, shape.head_width) = d_logits * k;
      d_qkv.block(begin, width + column, length, shape.head_width) = d_logits.transpose() * q;
    }
  }
  return d_qkv;
}

template <typename S>
Matrix<S> ffn_forward(const Matrix<S>& x, const S* w1, const S* b1, const S* w2, const S* b2, int hidden, int out,
                      FfnCache<S>& cache) {
  cache.hidden = linear_forward<S>(x, w1, b1, hidden).cwiseMax(S(0));
  return linear_forward<S>(cache.hidden, w2, b2, out);
}

template <typename S>
Matrix<S> ffn_backward(const Matrix<S>& x, const S* w1, const S* w2, const FfnCache<S>& cache, const Matrix<S>& dy,
                       S* d_w1, S* d_b1, S* d_w2, S* d_b2) {
  Matrix<S> d_hidden = linear_backward<S>(cache.hidden, w2, dy, d_w2, d_b2);
  d_hidden = d_hidden.cwiseProduct((cache.hidden.array() > S(0)).template cast<S>().matrix());
  return linear_backward<S>(x, w1, d_hidden, d_w1, d_b1);
}

template <typename S>
Matrix<S> gelu_forward(const Matrix<S>& x) {
  return x.unaryExpr([](S v) { return S(0.5) * v * (S(1) + std::erf(v * static_cast<S>(M_SQRT1_2))); });
}

template <typename S>
Matrix<S> gelu_backward(const Matrix<S>& x, const Matrix<S>& dy) {
  // d/dx x Φ(x) = Φ(x) + x φ(x).
  const S inverse_sqrt_2pi = static_cast<S>(0.5 * M_2_SQRTPI * M_SQRT1_2);
  return x.binaryExpr(dy, [inverse_sqrt_2pi](S v, S d) {
    const S cdf = S(0.5) * (S(1) + std::erf(v * static_cast<S>(M_SQRT1_2)));
    return d * (cdf + v * inverse_sqrt_2pi * std::exp(S(-0.5) * v * v));
  });
}

template <typename S>
Matrix<S> mean_pool_forward(const Matrix<S>& rows, const std::vector<int>& offsets) {
  const int sentences = sentence_count(offsets);
  Matrix<S> pooled = Matrix<S>::Zero(sentences, rows.cols());
  for (int s = 0; s < sentences; ++s) {
    const int length = offsets[s + 1] - offsets[s];
    if (length > 0) pooled.row(s) = rows.middleRows(offsets[s], length).colwise().sum() / static_cast<S>(length);
  }
  return pooled;
}

template <typename S>
Matrix<S> mean_pool_backward(const Matrix<S>& d_pooled, const std::vector<int>& offsets) {
  const int sentences = sentence_count(offsets);
  Matrix<S> d_rows(offsets.back(), d_pooled.cols());
  for (int s = 0; s < sentences; ++s) {
    const int length = offsets[s + 1] - offsets[s];
    if (length > 0) {
      d_rows.middleRows(offsets[s], length) = (d_pooled.row(s) / static_cast<S>(length)).replicate(length, 1);
    }
  }
  return d_rows;
}

template <typename S>
Matrix<S> tanh_backward(const Matrix<S>& y, const Matrix<S>& dy) {
  return dy.cwiseProduct((S(1) - y.array().square()).matrix());
}

template <typename S>
Matrix<S> l2_normalize_forward(const Matrix<S>& y, S epsilon) {
  const Column<S> inverse = y.rowwise().squaredNorm().cwiseMax(epsilon).cwiseSqrt().cwiseInverse();
  return inverse.asDiagonal() * y;
}

template <typename S>
Matrix<S> l2_normalize_backward(const Matrix<S>& y, S epsilon, const Matrix<S>& d_out) {
  Matrix<S> dy(y.rows(), y.cols());
  for (Eigen::Index r = 0; r < y.rows(); ++r) {
    const S squares = y.row(r).squaredNorm();
    const S inverse = S(1) / std::sqrt(std::max(squares, epsilon));
    dy.row(r) = inverse * d_out.row(r);
    // Below epsilon the norm is the constant sqrt(epsilon); above it, d(y/|y|) = (d - ŷ (ŷ·d)) / |y|.
    if (squares > epsilon) dy.row(r) -= (inverse * inverse * inverse * y.row(r).dot(d_out.row(r))) * y.row(r);
  }
  return dy;
}

#define RELMEM_BACKPROP_INSTANTIATE(S)                                                                              \
  template Matrix<S> multiply<S>(const Eigen::Ref<const Matrix<S>>&, bool, const Eigen::Ref<const Matrix<S>>&,      \
                                 bool);                                                                            \
  template Matrix<S> linear_forward<S>(const Matrix<S>&, const S*, const S*, int);                                 \
  template Matrix<S> linear_backward<S>(const Matrix<S>&, const S*, const Matrix<S>&, S*, S*);                     \
  template Matrix<S> layer_norm_forward<S>(const Matrix<S>&, const S*, const S*, S, LayerNormCache<S>&);           \
  template Matrix<S> layer_norm_backward<S>(const LayerNormCache<S>&, const S*, const Matrix<S>&, S*, S*);         \
  template Matrix<S> attention_forward<S>(const Matrix<S>&, const std::vector<int>&, const AttentionShape&,         \
                                          AttentionCache<S>&);                                                     \
  template Matrix<S> attention_backward<S>(const Matrix<S>&, const std::vector<int>&, const AttentionShape&,       \
                                           const AttentionCache<S>&, const Matrix<S>&);                            \
  template Matrix<S> ffn_forward<S>(const Matrix<S>&, const S*, const S*, const S*, const S*, int, int,            \
                                    FfnCache<S>&);                                                                 \
  template Matrix<S> ffn_backward<S>(const Matrix<S>&, const S*, const S*, const FfnCache<S>&, const Matrix<S>&,   \
                                     S*, S*, S*, S*);                                                              \
  template Matrix<S> gelu_forward<S>(const Matrix<S>&);                                                            \
  template Matrix<S> gelu_backward<S>(const Matrix<S>&, const Matrix<S>&);                                          \
  template Matrix<S> mean_pool_forward<S>(const Matrix<S>&, const std::vector<int>&);                              \
  template Matrix<S> mean_pool_backward<S>(const Matrix<S>&, const std::vector<int>&);                             \
  template Matrix<S> tanh_backward<S>(const Matrix<S>&, const Matrix<S>&);                                         \
  template Matrix<S> l2_normalize_forward<S>(const Matrix<S>&, S);                                                 \
  template Matrix<S> l2_normalize_backward<S>(const Matrix<S>&, S, const Matrix<S>&);

RELMEM_BACKPROP_INSTANTIATE(float)
RELMEM_BACKPROP_INSTANTIATE(double)

}  // namespace relmem::backprop
