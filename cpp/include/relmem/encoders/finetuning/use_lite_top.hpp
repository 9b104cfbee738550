#pragma once
// A trainable copy of USE-lite's top transformer layer(s) and its output head (mean pooling, tanh layer, L2
// normalization), for fine-tuning the encoder end to end: the frozen lower layers run once per text
// (UseLiteEncoder::token_states) and training runs forward and backward of only this part. With the encoder's own
// weights (UseLiteEncoder::top) it reproduces UseLiteEncoder::encode.
#include <cstdint>
#include <vector>

#include "relmem/common.hpp"
#include "relmem/encoders/finetuning/trainable_top.hpp"
#include "relmem/encoders/finetuning/transformer_backprop.hpp"

namespace relmem {

// One transformer layer as USE-lite's graph computes it:
//   h1 = Attention(LN(x)) W_o + b_o + residual(x),  residual(x) = x W_r + b_r when the width changes, else x
//   h2 = h1 + FFN(LN(h1))
struct TransformerLayerShape {
  int input_width = 0;
  int width = 0;
  int heads = 0;
  int head_width = 0;
  int hidden = 0;  // FFN width
  float attention_scale = 0.0f;

  int64_t parameter_count() const;
  bool operator==(const TransformerLayerShape& other) const;
};

template <typename S>
struct TopCache;

struct UseLiteTopShape {
  std::vector<TransformerLayerShape> layers;  // bottom first
  int output_width = 0;                       // the tanh layer's
  float norm_epsilon = 0.0f;
  float l2_epsilon = 0.0f;

  static constexpr const char* kName = "USE-lite top";
  template <typename S>
  using Cache = TopCache<S>;
  bool empty() const { return layers.empty(); }
  int layer_count() const { return static_cast<int>(layers.size()); }
  int input_width() const { return layers.empty() ? 0 : layers.front().input_width; }
  int token_width() const { return input_width(); }
  int vector_width() const { return output_width; }
  int64_t parameter_count() const;
  void validate() const;  // relmem::Error on sizes that do not chain
  bool operator==(const UseLiteTopShape& other) const;
};

// Flat parameter layout, per layer bottom first: norm scale | norm bias | W_qkv (in, 3 heads*head_width) | b_qkv |
// W_o | b_o | [W_r | b_r when the width changes] | FFN norm scale | FFN norm bias | W_1 | b_1 | W_2 | b_2; then the
// tanh layer's W_t (width, output) | b_t. Matrices are row-major (input, output).
template <typename S>
struct TopCache {
  struct Layer {
    backprop::Matrix<S> input, normed, qkv, context, ffn_normed;
    backprop::LayerNormCache<S> norm, ffn_norm;
    backprop::AttentionCache<S> attention;
    backprop::FfnCache<S> ffn;
  };
  std::vector<Layer> layers;
  std::vector<int> offsets;
  backprop::Matrix<S> pooled, activated;  // activated = tanh(pooled W_t + b_t)
};

template <typename S>
backprop::Matrix<S> top_forward(const UseLiteTopShape& shape, const S* parameters, const backprop::Matrix<S>& tokens,
                                const std::vector<int>& offsets, TopCache<S>& cache);
// Adds d(loss)/d(parameters) into d_parameters; returns d(loss)/d(tokens).
template <typename S>
backprop::Matrix<S> top_backward(const UseLiteTopShape& shape, const S* parameters, const TopCache<S>& cache,
                                 const backprop::Matrix<S>& d_vectors, S* d_parameters);

using UseLiteTop = TrainableTop<UseLiteTopShape>;

}  // namespace relmem
