#pragma once
// Forward and backward passes of the transformer pieces the fine-tuned encoder layers are made of (USE-lite, BERT), written by hand on
// Eigen and instantiated for float (training) and double (gradient checks). Token rows of all sentences are
// stacked; sentence s owns rows [offsets[s], offsets[s+1]), so attention and pooling never mix sentences (the
// ragged layout is the padding mask). Every *_backward returns the gradient of its input and adds the gradients of
// its parameters into the given buffers.
#include <Eigen/Core>
#include <vector>

namespace relmem::backprop {

template <typename S>
using Matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using Column = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <typename S>
using ConstMap = Eigen::Map<const Matrix<S>>;

// a·b with either side transposed (float products run on the packed AVX kernels).
template <typename S>
Matrix<S> multiply(const Eigen::Ref<const Matrix<S>>& a, bool transpose_a, const Eigen::Ref<const Matrix<S>>& b,
                   bool transpose_b);

// y = x W + b with W (in, out) and b (out) read from flat parameters.
template <typename S>
Matrix<S> linear_forward(const Matrix<S>& x, const S* weights, const S* bias, int out);
// Adds x^T dy to d_weights and the column sums of dy to d_bias; returns dy W^T.
template <typename S>
Matrix<S> linear_backward(const Matrix<S>& x, const S* weights, const Matrix<S>& dy, S* d_weights, S* d_bias);

// y = gain (x - mean) / sqrt(var + epsilon) + bias, per row.
template <typename S>
struct LayerNormCache {
  Matrix<S> normalized;        // (x - mean) / deviation
  Column<S> inverse_deviation;  // one per row
};
template <typename S>
Matrix<S> layer_norm_forward(const Matrix<S>& x, const S* gain, const S* bias, S epsilon, LayerNormCache<S>& cache);
template <typename S>
Matrix<S> layer_norm_backward(const LayerNormCache<S>& cache, const S* gain, const Matrix<S>& dy, S* d_gain,
                              S* d_bias);

// Multi-head self-attention on qkv rows [q | k | v] (heads x head_width each): per sentence and head,
// context = softmax(scale q k^T) v.
struct AttentionShape {
  int heads = 0;
  int head_width = 0;
  double scale = 0.0;
};
template <typename S>
struct AttentionCache {
  std::vector<Matrix<S>> weights;  // softmax rows, sentence-major then head
};
template <typename S>
Matrix<S> attention_forward(const Matrix<S>& qkv, const std::vector<int>& offsets, const AttentionShape& shape,
                            AttentionCache<S>& cache);
template <typename S>
Matrix<S> attention_backward(const Matrix<S>& qkv, const std::vector<int>& offsets, const AttentionShape& shape,
                             const AttentionCache<S>& cache, const Matrix<S>& d_context);

// FFN(x) = relu(x W1 + b1) W2 + b2.
template <typename S>
struct FfnCache {
  Matrix<S> hidden;  // after the relu
};
template <typename S>
Matrix<S> ffn_forward(const Matrix<S>& x, const S* w1, const S* b1, const S* w2, const S* b2, int hidden, int out,
                      FfnCache<S>& cache);
template <typename S>
Matrix<S> ffn_backward(const Matrix<S>& x, const S* w1, const S* w2, const FfnCache<S>& cache, const Matrix<S>& dy,
                       S* d_w1, S* d_b1, S* d_w2, S* d_b2);

// BERT's GELU, x Φ(x) with the exact normal CDF; the backward takes the input x.
template <typename S>
Matrix<S> gelu_forward(const Matrix<S>& x);
template <typename S>
Matrix<S> gelu_backward(const Matrix<S>& x, const Matrix<S>& dy);

// Mean of every sentence's rows; a sentence without tokens pools to zero (as the reference pools all padding).
template <typename S>
Matrix<S> mean_pool_forward(const Matrix<S>& rows, const std::vector<int>& offsets);
template <typename S>
Matrix<S> mean_pool_backward(const Matrix<S>& d_pooled, const std::vector<int>& offsets);

// y = tanh(z); the backward takes y.
template <typename S>
Matrix<S> tanh_backward(const Matrix<S>& y, const Matrix<S>& dy);

// out = y / sqrt(max(|y|^2, epsilon)) per row; the backward takes y.
template <typename S>
Matrix<S> l2_normalize_forward(const Matrix<S>& y, S epsilon);
template <typename S>
Matrix<S> l2_normalize_backward(const Matrix<S>& y, S epsilon, const Matrix<S>& d_out);

}  // namespace relmem::backprop
