#pragma once
// A trainable copy of a BERT encoder's top layer(s) and its sentence head (mean pooling over the tokens, L2
// normalization), for fine-tuning end to end: the frozen embeddings and lower layers run once per text
// (BertEncoder::token_states) and training runs forward and backward of only this part. With the encoder's own
// weights (BertEncoder::top) it reproduces BertEncoder::encode.
#include <cstdint>
#include <string>
#include <vector>

#include "relmem/common.hpp"
#include "relmem/encoders/finetuning/trainable_top.hpp"
#include "relmem/encoders/finetuning/transformer_backprop.hpp"

namespace relmem {

template <typename S>
struct BertTopCache;

// Every layer is BERT's post-norm layer with GELU:
//   h1 = LN1(x + Attention(x W_qkv + b_qkv) W_o + b_o),   out = LN2(h1 + gelu(h1 W_1 + b_1) W_2 + b_2)
struct BertTopShape {
  int layers = 0;
  int width = 0;   // hidden size
  int heads = 0;
  int hidden = 0;  // intermediate (FFN) size
  float norm_epsilon = 1e-12f;
  float l2_epsilon = 1e-24f;  // the sentence vector is y / sqrt(max(|y|^2, l2_epsilon))

  static constexpr const char* kName = "BERT top";
  template <typename S>
  using Cache = BertTopCache<S>;
  bool empty() const { return layers == 0; }
  int token_width() const { return width; }
  int vector_width() const { return width; }
  int head_width() const { return heads > 0 ? width / heads : 0; }
  int64_t layer_parameter_count() const;
  int64_t parameter_count() const { return layers * layer_parameter_count(); }
  void validate() const;  // relmem::Error on sizes that do not fit
  bool operator==(const BertTopShape& other) const;
};

// One layer's tensors in the flat parameters, in this order; matrices row-major (input, output), i.e. transposed
// from torch.nn.Linear's (out, in). W_qkv is query | key | value side by side.
struct BertLayerTensor {
  std::string name;                   // Hugging Face's name below "encoder.layer.N.", e.g. "attention.self.query"
  std::string kind;                   // "weight" or "bias"
  int64_t offset = 0;                 // in the layer's parameters
  std::vector<int64_t> shape;         // as stored in the flat parameters
};
std::vector<BertLayerTensor> bert_layer_tensors(const BertTopShape& shape);

template <typename S>
struct BertTopCache {
  struct Layer {
    backprop::Matrix<S> input, qkv, context, attended, intermediate, activated;
    backprop::LayerNormCache<S> attention_norm, output_norm;
    backprop::AttentionCache<S> attention;
  };
  std::vector<Layer> layers;
  std::vector<int> offsets;
  backprop::Matrix<S> pooled;
};

template <typename S>
backprop::Matrix<S> top_forward(const BertTopShape& shape, const S* parameters, const backprop::Matrix<S>& tokens,
                                     const std::vector<int>& offsets, BertTopCache<S>& cache);
// Adds d(loss)/d(parameters) into d_parameters; returns d(loss)/d(tokens).
template <typename S>
backprop::Matrix<S> top_backward(const BertTopShape& shape, const S* parameters, const BertTopCache<S>& cache,
                                      const backprop::Matrix<S>& d_vectors, S* d_parameters);

using BertTop = TrainableTop<BertTopShape>;

}  // namespace relmem
