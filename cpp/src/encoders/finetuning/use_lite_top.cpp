#include "relmem/encoders/finetuning/use_lite_top.hpp"

#include <cmath>
#include <string>

#include "top_passes.hpp"

namespace relmem {
namespace {

using backprop::Matrix;

// Pointers into the flat parameters (or a gradient with the same layout) for one layer.
template <typename P>
struct LayerTensors {
  P norm_scale, norm_bias, qkv, qkv_bias, output, output_bias, residual, residual_bias, ffn_norm_scale, ffn_norm_bias,
      ffn_in, ffn_in_bias, ffn_out, ffn_out_bias, end;
};

template <typename P>
LayerTensors<P> layer_tensors(const TransformerLayerShape& layer, P base) {
  const int64_t in = layer.input_width, width = layer.width, qkv = 3LL * layer.heads * layer.head_width;
  const int64_t hidden = layer.hidden;
  FlatTensors<P> tensors(base);
  LayerTensors<P> t;
  t.norm_scale = tensors.take(in);
  t.norm_bias = tensors.take(in);
  t.qkv = tensors.take(in * qkv);
  t.qkv_bias = tensors.take(qkv);
  t.output = tensors.take(qkv / 3 * width);
  t.output_bias = tensors.take(width);
  t.residual = in != width ? tensors.take(in * width) : nullptr;
  t.residual_bias = in != width ? tensors.take(width) : nullptr;
  t.ffn_norm_scale = tensors.take(width);
  t.ffn_norm_bias = tensors.take(width);
  t.ffn_in = tensors.take(width * hidden);
  t.ffn_in_bias = tensors.take(hidden);
  t.ffn_out = tensors.take(hidden * width);
  t.ffn_out_bias = tensors.take(width);
  t.end = tensors.end();
  return t;
}

backprop::AttentionShape attention_shape(const TransformerLayerShape& layer) {
  return {layer.heads, layer.head_width, static_cast<double>(layer.attention_scale)};
}

template <typename S>
Matrix<S> layer_forward(const TransformerLayerShape& layer, const LayerTensors<const S*>& t, S epsilon,
                        const Matrix<S>& x, const std::vector<int>& offsets, typename TopCache<S>::Layer& cache) {
  const int qkv = 3 * layer.heads * layer.head_width;
  cache.input = x;
  cache.normed = backprop::layer_norm_forward<S>(x, t.norm_scale, t.norm_bias, epsilon, cache.norm);
  cache.qkv = backprop::linear_forward<S>(cache.normed, t.qkv, t.qkv_bias, qkv);
  cache.context = backprop::attention_forward<S>(cache.qkv, offsets, attention_shape(layer), cache.attention);
  Matrix<S> h = backprop::linear_forward<S>(cache.context, t.output, t.output_bias, layer.width);
  if (t.residual) {
    h += backprop::linear_forward<S>(x, t.residual, t.residual_bias, layer.width);
  } else {
    h += x;
  }
  cache.ffn_normed = backprop::layer_norm_forward<S>(h, t.ffn_norm_scale, t.ffn_norm_bias, epsilon, cache.ffn_norm);
  h += backprop::ffn_forward<S>(cache.ffn_normed, t.ffn_in, t.ffn_in_bias, t.ffn_out, t.ffn_out_bias, layer.hidden,
                                layer.width, cache.ffn);
  return h;
}

template <typename S>
Matrix<S> layer_backward(const TransformerLayerShape& layer, const LayerTensors<const S*>& t,
                         const LayerTensors<S*>& d, const std::vector<int>& offsets,
                         const typename TopCache<S>::Layer& cache, const Matrix<S>& d_out) {
  const Matrix<S> d_ffn_normed = backprop::ffn_backward<S>(cache.ffn_normed, t.ffn_in, t.ffn_out, cache.ffn, d_out,
                                                          d.ffn_in, d.ffn_in_bias, d.ffn_out, d.ffn_out_bias);
  const Matrix<S> d_attended =
      d_out + backprop::layer_norm_backward<S>(cache.ffn_norm, t.ffn_norm_scale, d_ffn_normed, d.ffn_norm_scale,
                                               d.ffn_norm_bias);
  Matrix<S> d_x = t.residual ? backprop::linear_backward<S>(cache.input, t.residual, d_attended, d.residual,
                                                            d.residual_bias)
                             : d_attended;
  const Matrix<S> d_context =
      backprop::linear_backward<S>(cache.context, t.output, d_attended, d.output, d.output_bias);
  const Matrix<S> d_qkv =
      backprop::attention_backward<S>(cache.qkv, offsets, attention_shape(layer), cache.attention, d_context);
  const Matrix<S> d_normed = backprop::linear_backward<S>(cache.normed, t.qkv, d_qkv, d.qkv, d.qkv_bias);
  d_x += backprop::layer_norm_backward<S>(cache.norm, t.norm_scale, d_normed, d.norm_scale, d.norm_bias);
  return d_x;
}

}  // namespace

int64_t TransformerLayerShape::parameter_count() const {
  const int64_t in = input_width, qkv = 3LL * heads * head_width;
  const int64_t residual = in != width ? in * width + width : 0;
  return 2 * in + in * qkv + qkv + qkv / 3 * width + width + residual + 2LL * width + 2LL * width * hidden + hidden +
         width;
}

bool TransformerLayerShape::operator==(const TransformerLayerShape& o) const {
  return input_width == o.input_width && width == o.width && heads == o.heads && head_width == o.head_width &&
         hidden == o.hidden && attention_scale == o.attention_scale;
}

int64_t UseLiteTopShape::parameter_count() const {
  int64_t count = 0;
  for (const auto& layer : layers) count += layer.parameter_count();
  if (!layers.empty()) count += static_cast<int64_t>(layers.back().width) * output_width + output_width;
  return count;
}

void UseLiteTopShape::validate() const {
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    if (l.input_width < 1 || l.width < 1 || l.heads < 1 || l.head_width < 1 || l.hidden < 1 ||
        !(std::isfinite(l.attention_scale) && l.attention_scale > 0.0f)) {
      throw Error("encoder top layer " + std::to_string(i) + " has non-positive sizes");
    }
    if (i > 0 && l.input_width != layers[i - 1].width) {
      throw Error("encoder top layer " + std::to_string(i) + " does not take the width of the layer below");
    }
  }
  if (!layers.empty() && (output_width < 1 || !(norm_epsilon >= 0.0f) || !(l2_epsilon > 0.0f))) {
    throw Error("encoder top: output width and l2 epsilon must be positive, the norm epsilon not negative");
  }
}

bool UseLiteTopShape::operator==(const UseLiteTopShape& o) const {
  return layers == o.layers && output_width == o.output_width && norm_epsilon == o.norm_epsilon &&
         l2_epsilon == o.l2_epsilon;
}

template <typename S>
Matrix<S> top_forward(const UseLiteTopShape& shape, const S* parameters, const Matrix<S>& tokens,
                      const std::vector<int>& offsets, TopCache<S>& cache) {
  const S epsilon = static_cast<S>(shape.norm_epsilon);
  cache.offsets = offsets;
  cache.layers.resize(shape.layers.size());
  Matrix<S> x = tokens;
  const S* next = parameters;
  for (size_t i = 0; i < shape.layers.size(); ++i) {
    const auto t = layer_tensors<const S*>(shape.layers[i], next);
    x = layer_forward<S>(shape.layers[i], t, epsilon, x, offsets, cache.layers[i]);
    next = t.end;
  }
  cache.pooled = backprop::mean_pool_forward<S>(x, offsets);
  const int width = shape.layers.back().width;
  cache.activated = backprop::linear_forward<S>(cache.pooled, next, next + static_cast<int64_t>(width) *
                                                shape.output_width, shape.output_width).array().tanh().matrix();
  return backprop::l2_normalize_forward<S>(cache.activated, static_cast<S>(shape.l2_epsilon));
}

template <typename S>
Matrix<S> top_backward(const UseLiteTopShape& shape, const S* parameters, const TopCache<S>& cache,
                       const Matrix<S>& d_vectors, S* d_parameters) {
  std::vector<LayerTensors<const S*>> tensors;
  std::vector<LayerTensors<S*>> gradients;
  const S* next = parameters;
  S* d_next = d_parameters;
  for (const auto& layer : shape.layers) {
    tensors.push_back(layer_tensors<const S*>(layer, next));
    gradients.push_back(layer_tensors<S*>(layer, d_next));
    next = tensors.back().end;
    d_next = gradients.back().end;
  }
  const int64_t head_weights = static_cast<int64_t>(shape.layers.back().width) * shape.output_width;
  const Matrix<S> d_activated =
      backprop::l2_normalize_backward<S>(cache.activated, static_cast<S>(shape.l2_epsilon), d_vectors);
  const Matrix<S> d_logits = backprop::tanh_backward<S>(cache.activated, d_activated);
  const Matrix<S> d_pooled =
      backprop::linear_backward<S>(cache.pooled, next, d_logits, d_next, d_next + head_weights);
  Matrix<S> d_x = backprop::mean_pool_backward<S>(d_pooled, cache.offsets);
  for (size_t i = shape.layers.size(); i-- > 0;) {
    d_x = layer_backward<S>(shape.layers[i], tensors[i], gradients[i], cache.offsets, cache.layers[i], d_x);
  }
  return d_x;
}

RELMEM_INSTANTIATE_TOP_PASSES(UseLiteTopShape, float)
RELMEM_INSTANTIATE_TOP_PASSES(UseLiteTopShape, double)

}  // namespace relmem
