#include "relmem/encoders/finetuning/bert_top.hpp"

#include <cmath>

#include "top_passes.hpp"

namespace relmem {
namespace {

using backprop::Matrix;

// Pointers into one layer of the flat parameters (or of a gradient with the same layout).
template <typename P>
struct LayerTensors {
  P qkv, qkv_bias, output, output_bias, attention_norm_scale, attention_norm_bias, intermediate, intermediate_bias,
      ffn_out, ffn_out_bias, output_norm_scale, output_norm_bias, end;
};

template <typename P>
LayerTensors<P> layer_tensors(const BertTopShape& shape, P base) {
  const int64_t width = shape.width, hidden = shape.hidden;
  FlatTensors<P> tensors(base);
  LayerTensors<P> t;
  t.qkv = tensors.take(width * 3 * width);
  t.qkv_bias = tensors.take(3 * width);
  t.output = tensors.take(width * width);
  t.output_bias = tensors.take(width);
  t.attention_norm_scale = tensors.take(width);
  t.attention_norm_bias = tensors.take(width);
  t.intermediate = tensors.take(width * hidden);
  t.intermediate_bias = tensors.take(hidden);
  t.ffn_out = tensors.take(hidden * width);
  t.ffn_out_bias = tensors.take(width);
  t.output_norm_scale = tensors.take(width);
  t.output_norm_bias = tensors.take(width);
  t.end = tensors.end();
  return t;
}

backprop::AttentionShape attention_shape(const BertTopShape& shape) {
  return {shape.heads, shape.head_width(), 1.0 / std::sqrt(static_cast<double>(shape.head_width()))};
}

template <typename S>
Matrix<S> layer_forward(const BertTopShape& shape, const LayerTensors<const S*>& t, const Matrix<S>& x,
                        const std::vector<int>& offsets, typename BertTopCache<S>::Layer& cache) {
  const S epsilon = static_cast<S>(shape.norm_epsilon);
  cache.input = x;
  cache.qkv = backprop::linear_forward<S>(x, t.qkv, t.qkv_bias, 3 * shape.width);
  cache.context = backprop::attention_forward<S>(cache.qkv, offsets, attention_shape(shape), cache.attention);
  Matrix<S> h = backprop::linear_forward<S>(cache.context, t.output, t.output_bias, shape.width) + x;
  cache.attended = backprop::layer_norm_forward<S>(h, t.attention_norm_scale, t.attention_norm_bias, epsilon,
                                                   cache.attention_norm);
  cache.intermediate = backprop::linear_forward<S>(cache.attended, t.intermediate, t.intermediate_bias, shape.hidden);
  cache.activated = backprop::gelu_forward<S>(cache.intermediate);
  h = backprop::linear_forward<S>(cache.activated, t.ffn_out, t.ffn_out_bias, shape.width) + cache.attended;
  return backprop::layer_norm_forward<S>(h, t.output_norm_scale, t.output_norm_bias, epsilon, cache.output_norm);
}

template <typename S>
Matrix<S> layer_backward(const BertTopShape& shape, const LayerTensors<const S*>& t, const LayerTensors<S*>& d,
                         const std::vector<int>& offsets, const typename BertTopCache<S>::Layer& cache,
                         const Matrix<S>& d_out) {
  const Matrix<S> d_sum =
      backprop::layer_norm_backward<S>(cache.output_norm, t.output_norm_scale, d_out, d.output_norm_scale,
                                       d.output_norm_bias);
  const Matrix<S> d_activated =
      backprop::linear_backward<S>(cache.activated, t.ffn_out, d_sum, d.ffn_out, d.ffn_out_bias);
  const Matrix<S> d_intermediate = backprop::gelu_backward<S>(cache.intermediate, d_activated);
  const Matrix<S> d_attended =
      d_sum + backprop::linear_backward<S>(cache.attended, t.intermediate, d_intermediate, d.intermediate,
                                           d.intermediate_bias);
  const Matrix<S> d_h = backprop::layer_norm_backward<S>(cache.attention_norm, t.attention_norm_scale, d_attended,
                                                         d.attention_norm_scale, d.attention_norm_bias);
  const Matrix<S> d_context = backprop::linear_backward<S>(cache.context, t.output, d_h, d.output, d.output_bias);
  const Matrix<S> d_qkv =
      backprop::attention_backward<S>(cache.qkv, offsets, attention_shape(shape), cache.attention, d_context);
  return d_h + backprop::linear_backward<S>(cache.input, t.qkv, d_qkv, d.qkv, d.qkv_bias);
}

}  // namespace

int64_t BertTopShape::layer_parameter_count() const {
  const int64_t w = width, h = hidden;
  return 3 * w * w + 3 * w + w * w + w + 2 * w + w * h + h + h * w + w + 2 * w;
}

void BertTopShape::validate() const {
  if (layers < 0 || (layers > 0 && (width < 1 || heads < 1 || hidden < 1 || width % heads != 0))) {
    throw Error("BERT top: sizes must be positive and the width a multiple of the heads");
  }
  if (!(norm_epsilon >= 0.0f) || !(l2_epsilon > 0.0f)) {
    throw Error("BERT top: the norm epsilon must not be negative and the l2 epsilon must be positive");
  }
}

bool BertTopShape::operator==(const BertTopShape& o) const {
  return layers == o.layers && width == o.width && heads == o.heads && hidden == o.hidden &&
         norm_epsilon == o.norm_epsilon && l2_epsilon == o.l2_epsilon;
}

std::vector<BertLayerTensor> bert_layer_tensors(const BertTopShape& shape) {
  const int64_t w = shape.width, h = shape.hidden;
  std::vector<BertLayerTensor> out;
  int64_t offset = 0;
  auto add = [&](const std::string& name, const std::string& kind, std::vector<int64_t> dims) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    out.push_back({name, kind, offset, std::move(dims)});
    offset += count;
  };
  add("attention.self.qkv", "weight", {w, 3 * w});
  add("attention.self.qkv", "bias", {3 * w});
  add("attention.output.dense", "weight", {w, w});
  add("attention.output.dense", "bias", {w});
  add("attention.output.LayerNorm", "weight", {w});
  add("attention.output.LayerNorm", "bias", {w});
  add("intermediate.dense", "weight", {w, h});
  add("intermediate.dense", "bias", {h});
  add("output.dense", "weight", {h, w});
  add("output.dense", "bias", {w});
  add("output.LayerNorm", "weight", {w});
  add("output.LayerNorm", "bias", {w});
  return out;
}

template <typename S>
Matrix<S> top_forward(const BertTopShape& shape, const S* parameters, const Matrix<S>& tokens,
                           const std::vector<int>& offsets, BertTopCache<S>& cache) {
  cache.offsets = offsets;
  cache.layers.resize(static_cast<size_t>(shape.layers));
  Matrix<S> x = tokens;
  const S* next = parameters;
  for (int i = 0; i < shape.layers; ++i) {
    const auto t = layer_tensors<const S*>(shape, next);
    x = layer_forward<S>(shape, t, x, offsets, cache.layers[static_cast<size_t>(i)]);
    next = t.end;
  }
  cache.pooled = backprop::mean_pool_forward<S>(x, offsets);
  return backprop::l2_normalize_forward<S>(cache.pooled, static_cast<S>(shape.l2_epsilon));
}

template <typename S>
Matrix<S> top_backward(const BertTopShape& shape, const S* parameters, const BertTopCache<S>& cache,
                            const Matrix<S>& d_vectors, S* d_parameters) {
  const Matrix<S> d_pooled =
      backprop::l2_normalize_backward<S>(cache.pooled, static_cast<S>(shape.l2_epsilon), d_vectors);
  Matrix<S> d_x = backprop::mean_pool_backward<S>(d_pooled, cache.offsets);
  const int64_t per_layer = shape.layer_parameter_count();
  for (int i = shape.layers; i-- > 0;) {
    const auto t = layer_tensors<const S*>(shape, parameters + i * per_layer);
    const auto d = layer_tensors<S*>(shape, d_parameters + i * per_layer);
    d_x = layer_backward<S>(shape, t, d, cache.offsets, cache.layers[static_cast<size_t>(i)], d_x);
  }
  return d_x;
}

RELMEM_INSTANTIATE_TOP_PASSES(BertTopShape, float)
RELMEM_INSTANTIATE_TOP_PASSES(BertTopShape, double)

}  // namespace relmem
