#include "relmem/encoders/finetuning/bert_top.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>

namespace relmem {
namespace {

using backprop::Matrix;

// Sentences per chunk of BertTop::encode: bounds the activations held at once.
constexpr int kEncodeChunk = 64;

// Pointers into one layer of the flat parameters (or of a gradient with the same layout).
template <typename P>
struct LayerTensors {
  P qkv, qkv_bias, output, output_bias, attention_norm_scale, attention_norm_bias, intermediate, intermediate_bias,
      ffn_out, ffn_out_bias, output_norm_scale, output_norm_bias, end;
};

template <typename P>
LayerTensors<P> layer_tensors(const BertTopShape& shape, P base) {
  const int64_t width = shape.width, hidden = shape.hidden;
  P next = base;
  auto take = [&next](int64_t count) {
    P at = next;
    next += count;
    return at;
  };
  LayerTensors<P> t;
  t.qkv = take(width * 3 * width);
  t.qkv_bias = take(3 * width);
  t.output = take(width * width);
  t.output_bias = take(width);
  t.attention_norm_scale = take(width);
  t.attention_norm_bias = take(width);
  t.intermediate = take(width * hidden);
  t.intermediate_bias = take(hidden);
  t.ffn_out = take(hidden * width);
  t.ffn_out_bias = take(width);
  t.output_norm_scale = take(width);
  t.output_norm_bias = take(width);
  t.end = next;
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
Matrix<S> bert_top_forward(const BertTopShape& shape, const S* parameters, const Matrix<S>& tokens,
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
Matrix<S> bert_top_backward(const BertTopShape& shape, const S* parameters, const BertTopCache<S>& cache,
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

template Matrix<float> bert_top_forward<float>(const BertTopShape&, const float*, const Matrix<float>&,
                                               const std::vector<int>&, BertTopCache<float>&);
template Matrix<double> bert_top_forward<double>(const BertTopShape&, const double*, const Matrix<double>&,
                                                 const std::vector<int>&, BertTopCache<double>&);
template Matrix<float> bert_top_backward<float>(const BertTopShape&, const float*, const BertTopCache<float>&,
                                                const Matrix<float>&, float*);
template Matrix<double> bert_top_backward<double>(const BertTopShape&, const double*, const BertTopCache<double>&,
                                                  const Matrix<double>&, double*);

BertTop::BertTop(BertTopShape shape, std::vector<float> parameters)
    : shape_(std::move(shape)), parameters_(std::move(parameters)) {
  shape_.validate();
  if (static_cast<int64_t>(parameters_.size()) != shape_.parameter_count()) {
    throw Error("BERT top: " + std::to_string(parameters_.size()) + " parameters where its shape needs " +
                std::to_string(shape_.parameter_count()));
  }
}

void BertTop::check(const TokenStates& states) const {
  if (empty()) throw Error("BERT top has no layers");
  if (states.rows.cols() != shape_.width) {
    throw Error("BERT top takes " + std::to_string(shape_.width) + "-wide token states, got " +
                std::to_string(states.rows.cols()));
  }
  states.check();
}

RowMatrix BertTop::forward(const TokenStates& states, BertTopCache<float>& cache) const {
  check(states);
  return bert_top_forward<float>(shape_, parameters_.data(), states.rows, states.offsets, cache);
}

void BertTop::backward(const BertTopCache<float>& cache, const RowMatrix& d_vectors, std::vector<float>& gradient) const {
  if (gradient.size() != parameters_.size()) throw Error("BERT top: gradient buffer has the wrong size");
  if (d_vectors.rows() != cache.pooled.rows() || d_vectors.cols() != shape_.width) {
    throw Error("BERT top: the vectors' gradient does not match the forward pass");
  }
  bert_top_backward<float>(shape_, parameters_.data(), cache, d_vectors, gradient.data());
}

RowMatrix BertTop::encode(const TokenStates& states) const {
  check(states);
  const int sentences = states.sentences();
  RowMatrix out(sentences, shape_.width);
  const int chunks = (sentences + kEncodeChunk - 1) / kEncodeChunk;
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1) if (!omp_in_parallel() && chunks > 1)
  for (int chunk = 0; chunk < chunks; ++chunk) {
    try {
      const int begin = chunk * kEncodeChunk, end = std::min(sentences, begin + kEncodeChunk);
      std::vector<int> offsets;
      for (int s = begin; s <= end; ++s) offsets.push_back(states.offsets[s] - states.offsets[begin]);
      const RowMatrix rows = states.rows.middleRows(states.offsets[begin], offsets.back());
      BertTopCache<float> cache;
      out.middleRows(begin, end - begin) = bert_top_forward<float>(shape_, parameters_.data(), rows, offsets, cache);
    } catch (...) {
#pragma omp critical
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace relmem
