#pragma once
// The Universal Sentence Encoder lite network, as its TensorFlow.js graph (model.json) computes it:
//   x0 = E[id] + (E[id] + timing(position))       (the graph adds the embeddings twice)
//   layer 0 (width 256 -> 512, 4 heads of 64):  h1 = Attention(LN(x0)) W_o + b_o + (x0 W_d + b_d)
//                                               h2 = h1 + FFN(LN(h1))
//   layer 1 (width 512, 4 heads of 128):        h3 = h2 + Attention(LN(h2)) W_o + b_o
//                                               h4 = h3 + FFN(LN(h3))
//   embedding = l2_normalize(tanh(mean_tokens(h4) W_t + b_t))
// with FFN(x) = relu(x W_1 + b_1) W_2 + b_2, LN(x) = scale (x - mean) / sqrt(var + 1e-6) + bias, attention
// softmax(q k^T / sqrt(head width)) v over the sentence's own tokens, and at most 128 tokens per sentence.
// The last FFN's output projection is linear, so it is applied once to the token mean instead of to every token.
// Layer 0's products with its input are linear in (embedding, timing) as well: they come from per-id and per-position
// tables computed at load time (see token_table_).
// The int8 variant ("use-lite-int8") runs the six large per-token products (layer 0: attention output and FFN, layer 1:
// query/key/value, attention output, FFN input) as u8 x s8 products (int8_gemm.hpp); the rest stays fp32.
#include <cstdint>
#include <vector>

#include "../linalg/int8_gemm.hpp"
#include "../linalg/packed_gemm.hpp"
#include "relmem/encoders/finetuning/use_lite_top.hpp"
#include "relmem/encoders/tfjs_weights.hpp"

namespace relmem {

class UseLiteModel {
 public:
  // `quantized`: the int8 variant (the caller checks gemm::int8_available()).
  explicit UseLiteModel(const TfjsWeights& weights, bool quantized = false);

  int dim() const { return output_width_; }
  int max_tokens() const { return max_tokens_; }

  // One embedding row per sentence into `out` (row-major, dim() columns). Every sentence holds 1..max_tokens() ids
  // below the vocabulary size. Runs on the calling thread, or on all threads when called outside a parallel region.
  void embed(const std::vector<const std::vector<int32_t>*>& sentences, float* out) const;
  // The embedding of a text without tokens (the reference pools an all-padding row to zero).
  const std::vector<float>& empty_embedding() const { return empty_embedding_; }
  int vocabulary_size() const { return vocabulary_size_; }

  // The top `layers` (1 or 2) transformer layers and the tanh head as a trainable UseLiteTop: its shape, its
  // weights in UseLiteTop's layout, and the token rows entering it (tokens of all sentences x its input width).
  UseLiteTopShape top_shape(int layers) const;
  std::vector<float> top_parameters(int layers) const;
  void token_states(const std::vector<const std::vector<int32_t>*>& sentences, int layers, float* out) const;

 private:
  // A weight matrix in fp32 and, where the int8 variant quantizes it, as s8.
  struct Projection {
    gemm::PackedMatrix weights;
    gemm::Int8Matrix quantized;  // empty unless quantized
    int n() const { return weights.n(); }
    void apply(const float* a, int m, int64_t lda, float* c, int64_t ldc, const gemm::Epilogue& epilogue = {}) const;
  };
  struct Layer {
    int input_width = 0;
    int width = 0;
    int heads = 0;
    int head_width = 0;
    float attention_scale = 0.0f;
    std::vector<float> norm_scale, norm_bias;
    Projection qkv;  // layer 0: used through token_table_, kept for top_parameters
    std::vector<float> qkv_bias;
    Projection output;
    std::vector<float> output_bias;
    gemm::PackedMatrix residual;  // layer 0 only: the input projected to the layer's width (through the tables)
    std::vector<float> residual_bias;
    std::vector<float> ffn_norm_scale, ffn_norm_bias;
    Projection ffn_in;
    std::vector<float> ffn_in_bias;
    Projection ffn_out;
    std::vector<float> ffn_out_bias;
  };
  struct Workspace;

  void load_layer(const TfjsWeights& weights, int index, bool quantized, Layer& layer) const;
  Workspace& workspace(int tokens) const;  // this thread's buffers, sized for `tokens`
  std::vector<int> embed_inputs(const std::vector<const std::vector<int32_t>*>& sentences, Workspace& ws) const;
  void build_first_layer_tables();
  void first_layer(const std::vector<const std::vector<int32_t>*>& sentences, const std::vector<int>& offsets,
                   Workspace& ws) const;
  void layer_norm(const float* in, int rows, int width, const std::vector<float>& scale, const std::vector<float>& bias,
                  float* out) const;
  void attention(const Layer& layer, const std::vector<int>& offsets, const float* qkv, float* context) const;
  void attend_directly(const Layer& layer, int length, const float* qkv, float* context) const;
  void attend_by_products(const Layer& layer, int length, const float* qkv, float* context) const;
  void finish(const float* pooled, int count, float* out) const;

  static constexpr int kDirectAttentionMaxTokens = 16;

  int vocabulary_size_ = 0;
  int embedding_width_ = 0;
  int output_width_ = 0;
  int max_tokens_ = 0;
  float norm_epsilon_ = 0.0f;
  float l2_epsilon_ = 0.0f;
  std::vector<float> embeddings_;  // vocabulary_size x embedding_width
  std::vector<float> timing_;      // max_tokens x embedding_width: sin | cos of position / timescale
  Layer layers_[2];
  // Layer 0 without its input GEMMs. With x0 = 2 E[id] + timing[p], c() the centering of a row, s the norm scale:
  //   LN(x0) W_qkv + b_qkv = (2 c(E[id]) + c(timing[p])) diag(s) W_qkv / sigma(x0) + (norm bias W_qkv + b_qkv)
  //   x0 W_d + b_d        = 2 E[id] W_d + (timing[p] W_d + b_d)
  // Each row of token_table_ holds [2 c(E[id]) diag(s) W_qkv | 2 E[id] W_d], of position_table_ likewise
  // [c(timing[p]) diag(s) W_qkv | timing[p] W_d + b_d]. Cost: vocabulary x (768 + 512) floats, about 41 MB for
  // USE-lite's 8002 pieces, accepted for skipping 0.33M of the 3.9M multiply-adds per token.
  std::vector<float> token_table_, position_table_;
  std::vector<float> first_qkv_bias_;  // norm bias W_qkv + b_qkv
  gemm::PackedMatrix tanh_weights_;
  std::vector<float> tanh_bias_;
  std::vector<float> empty_embedding_;
};

}  // namespace relmem
