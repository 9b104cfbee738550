#include "use_lite_model.hpp"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>

#include "relmem/common.hpp"

namespace relmem {
namespace {

// Weight names in model.json: trained variables, and constants folded out of the graph.
const std::string kVariables = "module/Encoder_en/KonaTransformer/Encode/";
const std::string kEncode = "module_apply_default/Encoder_en/KonaTransformer/Encode/";
const std::string kStack = kEncode + "TransformerStack/";

int64_t size_of(const TfjsWeights& weights, const std::string& name) { return weights.tensor(name).element_count(); }

gemm::PackedMatrix packed(const std::vector<float>& matrix, int rows, int cols) {
  gemm::PackedMatrix out;
  out.pack(matrix.data(), rows, cols, cols, 1);
  return out;
}

template <typename Projection>
Projection projection(const std::vector<float>& matrix, int rows, int cols, bool quantize) {
  Projection out;
  out.weights = packed(matrix, rows, cols);
  if (quantize) out.quantized.quantize(matrix.data(), rows, cols);
  return out;
}

// Appends the row-major (k, n) source of a packed matrix.
void append_unpacked(const gemm::PackedMatrix& matrix, std::vector<float>& out) {
  const int width = matrix.panel_width();
  for (int r = 0; r < matrix.k(); ++r)
    for (int c = 0; c < matrix.n(); ++c) out.push_back(matrix.panel(c / width)[static_cast<int64_t>(r) * width + c % width]);
}

void append(const std::vector<float>& values, std::vector<float>& out) { out.insert(out.end(), values.begin(), values.end()); }

// `factor` times each row minus the row's mean.
std::vector<float> centered(const std::vector<float>& rows, int width, float factor) {
  std::vector<float> out(rows.size());
  for (std::size_t r = 0; r < rows.size() / width; ++r) {
    const Eigen::Map<const Eigen::ArrayXf> in(rows.data() + r * width, width);
    Eigen::Map<Eigen::ArrayXf>(out.data() + r * width, width) = factor * (in - in.mean());
  }
  return out;
}

}  // namespace

struct UseLiteModel::Workspace {
  AlignedFloats inputs, normed, qkv, context, hidden, ffn, pooled_hidden, pooled_ffn;
};

void UseLiteModel::Projection::apply(const float* a, int m, int64_t lda, float* c, int64_t ldc,
                                     const gemm::Epilogue& epilogue) const {
  if (quantized.n() > 0) {
    gemm::multiply_quantized(a, m, lda, quantized, c, ldc, epilogue);
  } else {
    gemm::multiply(a, m, lda, weights, c, ldc, epilogue);
  }
}

UseLiteModel::UseLiteModel(const TfjsWeights& weights, bool quantized) {
  const TfjsTensor& embeddings = weights.tensor("module/Embeddings_en");
  if (embeddings.shape.size() != 2 || embeddings.dtype != "float32") throw Error("model.json: malformed Embeddings_en");
  vocabulary_size_ = static_cast<int>(embeddings.shape[0]);
  embedding_width_ = static_cast<int>(embeddings.shape[1]);
  embeddings_ = embeddings.floats;
  max_tokens_ =
      static_cast<int>(weights.scalar("module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y"));
  // The graph's four layer norms all add this one constant.
  norm_epsilon_ = static_cast<float>(
      weights.scalar(kStack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"));
  l2_epsilon_ =
      static_cast<float>(weights.scalar("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"));
  if (max_tokens_ < 1 || embedding_width_ % 2 != 0) throw Error("model.json: unexpected USE-lite hyper-parameters");

  // Timing signal: [sin(p / timescale_i) | cos(p / timescale_i)], the inverse timescales stored in the graph.
  const int half = embedding_width_ / 2;
  const auto& inverse_timescales =
      weights.floats(kStack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", {1, half});
  timing_.resize(static_cast<std::size_t>(max_tokens_) * embedding_width_);
  for (int p = 0; p < max_tokens_; ++p) {
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * inverse_timescales[i];
      timing_[p * embedding_width_ + i] = std::sin(angle);
      timing_[p * embedding_width_ + half + i] = std::cos(angle);
    }
  }

  load_layer(weights, 0, quantized, layers_[0]);
  load_layer(weights, 1, quantized, layers_[1]);
  // Layer 0 widens the embeddings (its residual branch has a projection), layer 1 keeps its width.
  if (layers_[0].input_width != embedding_width_ || layers_[0].width == embedding_width_ ||
      layers_[1].input_width != layers_[0].width || layers_[1].width != layers_[0].width) {
    throw Error("model.json: USE-lite layer widths are not 256 -> 512 -> 512-like");
  }
  build_first_layer_tables();
  const int width = layers_[1].width;
  output_width_ = static_cast<int>(size_of(weights, "module/Encoder_en/hidden_layers/tanh_layer_0/bias"));
  tanh_weights_ = packed(weights.floats("module/Encoder_en/hidden_layers/tanh_layer_0/weights", {width, output_width_}),
                         width, output_width_);
  tanh_bias_ = weights.floats("module/Encoder_en/hidden_layers/tanh_layer_0/bias", {output_width_});

  const std::vector<float> zeros(width, 0.0f);
  empty_embedding_.resize(output_width_);
  finish(zeros.data(), 1, empty_embedding_.data());
}

void UseLiteModel::load_layer(const TfjsWeights& weights, int index, bool quantized, Layer& layer) const {
  const std::string name = "Layer_" + std::to_string(index) + "/TransformerLayer/";
  const std::string attention = name + "MultiheadAttention/";
  const std::string norm = "layer_prepostprocess/layer_norm/layer_norm_";
  const int in = static_cast<int>(size_of(weights, kEncode + name + norm + "scale/ConcatPartitions/concat"));
  const TfjsTensor& splits = weights.tensor(kStack + attention + "Const");
  if (splits.ints.size() != 3 || splits.ints[0] != splits.ints[1] || splits.ints[1] != splits.ints[2]) {
    throw Error("model.json: unexpected query/key/value split in " + name);
  }
  const int qkv_width = splits.ints[0];
  const int width =
      static_cast<int>(size_of(weights, kEncode + attention + "output_transform_single/bias/ConcatPartitions/concat"));
  const int hidden = static_cast<int>(size_of(weights, kEncode + name + "FFN/conv1/bias/ConcatPartitions/concat"));

  layer.input_width = in;
  layer.width = width;
  // The graph reshapes queries, keys and values to [batch, length, heads, head width] with these constants.
  layer.heads = static_cast<int>(weights.scalar(
      kStack + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"));
  layer.head_width =
      static_cast<int>(weights.scalar(kStack + attention + "split_heads/split_last_dimension/Reshape/shape/3"));
  if (layer.heads < 1 || layer.heads * layer.head_width != qkv_width)
    throw Error("model.json: unexpected heads in " + name);
  layer.attention_scale = static_cast<float>(weights.scalar(kStack + attention + "mul/y"));

  layer.norm_scale = weights.floats(kEncode + name + norm + "scale/ConcatPartitions/concat", {in});
  layer.norm_bias = weights.floats(kEncode + name + norm + "bias/ConcatPartitions/concat", {in});
  // The int8 variant keeps layer 0's query/key/value product (it is in the tables) and layer 1's FFN output (it acts
  // on token means only) in fp32.
  layer.qkv = projection<Projection>(
      weights.floats(kVariables + attention + "qkv_transform_single/kernel/part_0", {1, 1, in, 3 * qkv_width}), in,
      3 * qkv_width, quantized && index == 1);
  layer.qkv_bias =
      weights.floats(kEncode + attention + "qkv_transform_single/bias/ConcatPartitions/concat", {3 * qkv_width});
  layer.output = projection<Projection>(
      weights.floats(kVariables + attention + "output_transform_single/kernel/part_0", {1, 1, qkv_width, width}),
      qkv_width, width, quantized);
  layer.output_bias =
      weights.floats(kEncode + attention + "output_transform_single/bias/ConcatPartitions/concat", {width});
  if (in != width) {
    layer.residual =
        packed(weights.floats(kEncode + name + "dense/kernel/ConcatPartitions/concat", {in, width}), in, width);
    layer.residual_bias = weights.floats(kEncode + name + "dense/bias/ConcatPartitions/concat", {width});
  }
  layer.ffn_norm_scale = weights.floats(kEncode + name + "FFN/" + norm + "scale/ConcatPartitions/concat", {width});
  layer.ffn_norm_bias = weights.floats(kEncode + name + "FFN/" + norm + "bias/ConcatPartitions/concat", {width});
  layer.ffn_in = projection<Projection>(
      weights.floats(kStack + name + "FFN/conv1/Tensordot/Reshape_1", {width, hidden}), width, hidden, quantized);
  layer.ffn_in_bias = weights.floats(kEncode + name + "FFN/conv1/bias/ConcatPartitions/concat", {hidden});
  layer.ffn_out = projection<Projection>(
      weights.floats(kStack + name + "FFN/conv2/Tensordot/Reshape_1", {hidden, width}), hidden, width,
      quantized && index == 0);
  layer.ffn_out_bias = weights.floats(kEncode + name + "FFN/conv2/bias/ConcatPartitions/concat", {width});
}

void UseLiteModel::build_first_layer_tables() {
  const Layer& first = layers_[0];
  const int in = embedding_width_;
  const int qkv_width = first.qkv.n();
  const int row = qkv_width + first.width;
  std::vector<float> scaled_qkv;  // diag(norm scale) W_qkv
  append_unpacked(first.qkv.weights, scaled_qkv);
  for (int r = 0; r < in; ++r)
    for (int c = 0; c < qkv_width; ++c) scaled_qkv[static_cast<int64_t>(r) * qkv_width + c] *= first.norm_scale[r];
  const gemm::PackedMatrix scaled = packed(scaled_qkv, in, qkv_width);

  std::vector<float> doubled(embeddings_.size());
  for (std::size_t i = 0; i < doubled.size(); ++i) doubled[i] = 2.0f * embeddings_[i];
  token_table_.resize(static_cast<std::size_t>(vocabulary_size_) * row);
  gemm::multiply(centered(embeddings_, in, 2.0f).data(), vocabulary_size_, in, scaled, token_table_.data(), row);
  gemm::multiply(doubled.data(), vocabulary_size_, in, first.residual, token_table_.data() + qkv_width, row);
  position_table_.resize(static_cast<std::size_t>(max_tokens_) * row);
  gemm::multiply(centered(timing_, in, 1.0f).data(), max_tokens_, in, scaled, position_table_.data(), row);
  gemm::multiply(timing_.data(), max_tokens_, in, first.residual, position_table_.data() + qkv_width, row,
                 {first.residual_bias.data()});
  first_qkv_bias_.resize(qkv_width);
  gemm::multiply(first.norm_bias.data(), 1, in, first.qkv.weights, first_qkv_bias_.data(), qkv_width,
                 {first.qkv_bias.data()});
}

void UseLiteModel::layer_norm(const float* in, int rows, int width, const std::vector<float>& scale,
                              const std::vector<float>& bias, float* out) const {
  const Eigen::Map<const Eigen::ArrayXf> gain(scale.data(), width), shift(bias.data(), width);
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && rows >= 256)
  for (int r = 0; r < rows; ++r) {
    const Eigen::Map<const Eigen::ArrayXf> x(in + static_cast<int64_t>(r) * width, width);
    Eigen::Map<Eigen::ArrayXf> y(out + static_cast<int64_t>(r) * width, width);
    y = x - x.mean();
    const float inverse_deviation = 1.0f / std::sqrt(y.square().mean() + norm_epsilon_);
    y = gain * inverse_deviation * y + shift;
  }
}

void UseLiteModel::attention(const Layer& layer, const std::vector<int>& offsets, const float* qkv,
                             float* context) const {
  const int width = layer.heads * layer.head_width;
  const int64_t stride = 3 * width;
  const int sentences = static_cast<int>(offsets.size()) - 1;
#pragma omp parallel for schedule(dynamic) if (!omp_in_parallel() && offsets.back() >= 256)
  for (int s = 0; s < sentences; ++s) {
    const int length = offsets[s + 1] - offsets[s];
    const float* base = qkv + offsets[s] * stride;
    float* out = context + offsets[s] * width;
    if (length <= kDirectAttentionMaxTokens) {
      attend_directly(layer, length, base, out);
    } else {
      attend_by_products(layer, length, base, out);
    }
  }
}

// softmax(scale q k^T) v of one short sentence, its keys in vector lanes: each query's logits are head-width lane
// products, without the horizontal sums of per-key dot products or the packing of the matrix kernel.
void UseLiteModel::attend_directly(const Layer& layer, int length, const float* qkv, float* context) const {
  using Lanes = Eigen::Array<float, kDirectAttentionMaxTokens, 1>;
  using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int width = layer.heads * layer.head_width;
  const int64_t stride = 3 * width;
  const int hw = layer.head_width;
  thread_local std::vector<Lanes, Eigen::aligned_allocator<Lanes>> keys;  // keys[d][j] = k_j[d]
  keys.assign(hw, Lanes::Zero());
  for (int h = 0; h < layer.heads; ++h) {
    const float* queries = qkv + h * hw;
    for (int j = 0; j < length; ++j) {
      const float* key = queries + width + j * stride;
      for (int d = 0; d < hw; ++d) keys[d][j] = key[d];
    }
    const Eigen::Map<const RowMajorMatrix, 0, Eigen::OuterStride<>> value_rows(queries + 2 * width, length, hw,
                                                                                Eigen::OuterStride<>(stride));
    for (int i = 0; i < length; ++i) {
      const float* query = queries + i * stride;
      // Four sums, so that consecutive multiply-adds do not wait on each other.
      Lanes sum0 = Lanes::Zero(), sum1 = Lanes::Zero(), sum2 = Lanes::Zero(), sum3 = Lanes::Zero();
      int d = 0;
      for (; d + 4 <= hw; d += 4) {
        sum0 += query[d] * keys[d];
        sum1 += query[d + 1] * keys[d + 1];
        sum2 += query[d + 2] * keys[d + 2];
        sum3 += query[d + 3] * keys[d + 3];
      }
      for (; d < hw; ++d) sum0 += query[d] * keys[d];
      const Lanes logits = (sum0 + sum1) + (sum2 + sum3);
      // softmax of the scaled logits (scaling them equals the graph's scaling of q), 0 beyond the sentence.
      const float highest = logits.head(length).maxCoeff();
      Lanes weights = ((logits - highest) * layer.attention_scale).exp();
      weights.tail(kDirectAttentionMaxTokens - length).setZero();
      weights /= weights.sum();
      Eigen::Map<Eigen::VectorXf>(context + static_cast<int64_t>(i) * width + h * hw, hw).noalias() =
          value_rows.transpose() * weights.head(length).matrix();
    }
  }
}

// The same through the matrix kernel, for longer sentences.
void UseLiteModel::attend_by_products(const Layer& layer, int length, const float* qkv, float* context) const {
  const int width = layer.heads * layer.head_width;
  const int64_t stride = 3 * width;
  thread_local gemm::PackedMatrix keys, values;
  thread_local AlignedFloats weights;
  weights.resize(static_cast<std::size_t>(length) * length);
  for (int h = 0; h < layer.heads; ++h) {
    const int column = h * layer.head_width;
    keys.pack(qkv + width + column, layer.head_width, length, 1, stride);  // K^T
    gemm::multiply(qkv + column, length, stride, keys, weights.data(), length);
    for (int i = 0; i < length; ++i) {
      Eigen::Map<Eigen::ArrayXf> row(weights.data() + static_cast<int64_t>(i) * length, length);
      row = ((row - row.maxCoeff()) * layer.attention_scale).exp();
      row /= row.sum();
    }
    values.pack(qkv + 2 * width + column, length, layer.head_width, stride, 1);
    gemm::multiply(weights.data(), length, length, values, context + column, width);
  }
}

void UseLiteModel::finish(const float* pooled, int count, float* out) const {
  gemm::multiply(pooled, count, layers_[1].width, tanh_weights_, out, output_width_, {tanh_bias_.data()});
  for (int s = 0; s < count; ++s) {
    Eigen::Map<Eigen::ArrayXf> row(out + static_cast<int64_t>(s) * output_width_, output_width_);
    row = row.tanh();
    row /= std::sqrt(std::max(row.square().sum(), l2_epsilon_));
  }
}

UseLiteModel::Workspace& UseLiteModel::workspace(int tokens) const {
  const Layer& first = layers_[0];
  const Layer& second = layers_[1];
  const int width = second.width;
  const int hidden = std::max(first.ffn_in.n(), second.ffn_in.n());
  const int qkv_width = 3 * std::max(first.heads * first.head_width, second.heads * second.head_width);
  thread_local Workspace ws;
  ws.inputs.resize(static_cast<std::size_t>(tokens) * embedding_width_);
  ws.normed.resize(static_cast<std::size_t>(tokens) * std::max(embedding_width_, width));
  ws.qkv.resize(static_cast<std::size_t>(tokens) * qkv_width);
  ws.context.resize(static_cast<std::size_t>(tokens) * qkv_width / 3);
  ws.hidden.resize(static_cast<std::size_t>(tokens) * width);
  ws.ffn.resize(static_cast<std::size_t>(tokens) * hidden);
  return ws;
}

std::vector<int> UseLiteModel::embed_inputs(const std::vector<const std::vector<int32_t>*>& sentences,
                                            Workspace& ws) const {
  const int count = static_cast<int>(sentences.size());
  std::vector<int> offsets(count + 1, 0);
  for (int s = 0; s < count; ++s) offsets[s + 1] = offsets[s] + static_cast<int>(sentences[s]->size());
  for (int s = 0; s < count; ++s) {
    const std::vector<int32_t>& ids = *sentences[s];
    for (std::size_t t = 0; t < ids.size(); ++t) {
      const float* embedding = embeddings_.data() + static_cast<int64_t>(ids[t]) * embedding_width_;
      const float* timing = timing_.data() + t * embedding_width_;
      float* x = ws.inputs.data() + static_cast<int64_t>(offsets[s] + t) * embedding_width_;
      for (int j = 0; j < embedding_width_; ++j) x[j] = embedding[j] + (embedding[j] + timing[j]);
    }
  }
  return offsets;
}

// Layer 0 from ws.inputs (the sentences' x0) into ws.hidden, its input products looked up in the tables.
void UseLiteModel::first_layer(const std::vector<const std::vector<int32_t>*>& sentences,
                               const std::vector<int>& offsets, Workspace& ws) const {
  const Layer& first = layers_[0];
  const int width = first.width;
  const int tokens = offsets.back();
  const int first_qkv = first.qkv.n();
  const int row = first_qkv + width;
  const Eigen::Map<const Eigen::ArrayXf> qkv_bias(first_qkv_bias_.data(), first_qkv);
  const int count = static_cast<int>(sentences.size());
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && tokens >= 256)
  for (int s = 0; s < count; ++s) {
    const std::vector<int32_t>& ids = *sentences[s];
    for (int t = 0; t < static_cast<int>(ids.size()); ++t) {
      const int64_t i = offsets[s] + t;
      const Eigen::Map<const Eigen::ArrayXf> x(ws.inputs.data() + i * embedding_width_, embedding_width_);
      const float inverse_deviation = 1.0f / std::sqrt((x - x.mean()).square().mean() + norm_epsilon_);
      const float* by_token = token_table_.data() + static_cast<int64_t>(ids[t]) * row;
      const float* by_position = position_table_.data() + static_cast<int64_t>(t) * row;
      Eigen::Map<Eigen::ArrayXf>(ws.qkv.data() + i * first_qkv, first_qkv) =
          inverse_deviation * (Eigen::Map<const Eigen::ArrayXf>(by_token, first_qkv) +
                               Eigen::Map<const Eigen::ArrayXf>(by_position, first_qkv)) +
          qkv_bias;
      Eigen::Map<Eigen::ArrayXf>(ws.hidden.data() + i * width, width) =
          Eigen::Map<const Eigen::ArrayXf>(by_token + first_qkv, width) +
          Eigen::Map<const Eigen::ArrayXf>(by_position + first_qkv, width);
    }
  }
  attention(first, offsets, ws.qkv.data(), ws.context.data());
  first.output.apply(ws.context.data(), tokens, first_qkv / 3, ws.hidden.data(), width,
                     {first.output_bias.data(), true});
  layer_norm(ws.hidden.data(), tokens, width, first.ffn_norm_scale, first.ffn_norm_bias, ws.normed.data());
  first.ffn_in.apply(ws.normed.data(), tokens, width, ws.ffn.data(), first.ffn_in.n(),
                     {first.ffn_in_bias.data(), false, true});
  first.ffn_out.apply(ws.ffn.data(), tokens, first.ffn_in.n(), ws.hidden.data(), width,
                      {first.ffn_out_bias.data(), true});
}

void UseLiteModel::token_states(const std::vector<const std::vector<int32_t>*>& sentences, int layers,
                                float* out) const {
  if (layers < 1 || layers > 2) throw Error("USE-lite has 2 transformer layers: fine-tune 1 or 2 of them");
  int tokens = 0;
  for (const auto* sentence : sentences) tokens += static_cast<int>(sentence->size());
  if (tokens == 0) return;
  Workspace& ws = workspace(tokens);
  const std::vector<int> offsets = embed_inputs(sentences, ws);
  if (layers == 2) {
    std::copy(ws.inputs.begin(), ws.inputs.begin() + static_cast<int64_t>(tokens) * embedding_width_, out);
    return;
  }
  first_layer(sentences, offsets, ws);
  std::copy(ws.hidden.begin(), ws.hidden.begin() + static_cast<int64_t>(tokens) * layers_[0].width, out);
}

void UseLiteModel::embed(const std::vector<const std::vector<int32_t>*>& sentences, float* out) const {
  const int count = static_cast<int>(sentences.size());
  if (count == 0) return;
  int tokens = 0;
  for (const auto* sentence : sentences) tokens += static_cast<int>(sentence->size());
  Workspace& ws = workspace(tokens);
  const std::vector<int> offsets = embed_inputs(sentences, ws);
  first_layer(sentences, offsets, ws);

  const Layer& second = layers_[1];
  const int width = second.width;

  // Layer 1, up to the FFN's hidden activations.
  const int second_qkv = 3 * second.heads * second.head_width;
  layer_norm(ws.hidden.data(), tokens, width, second.norm_scale, second.norm_bias, ws.normed.data());
  second.qkv.apply(ws.normed.data(), tokens, width, ws.qkv.data(), second_qkv, {second.qkv_bias.data()});
  attention(second, offsets, ws.qkv.data(), ws.context.data());
  second.output.apply(ws.context.data(), tokens, second_qkv / 3, ws.hidden.data(), width,
                      {second.output_bias.data(), true});
  layer_norm(ws.hidden.data(), tokens, width, second.ffn_norm_scale, second.ffn_norm_bias, ws.normed.data());
  second.ffn_in.apply(ws.normed.data(), tokens, width, ws.ffn.data(), second.ffn_in.n(),
                      {second.ffn_in_bias.data(), false, true});

  // Mean over each sentence's tokens; the last FFN projection and its residual are linear, so they act on the means.
  const int second_hidden = second.ffn_in.n();
  ws.pooled_hidden.assign(static_cast<std::size_t>(count) * width, 0.0f);
  ws.pooled_ffn.assign(static_cast<std::size_t>(count) * second_hidden, 0.0f);
  for (int s = 0; s < count; ++s) {
    const float inverse_length = 1.0f / static_cast<float>(offsets[s + 1] - offsets[s]);
    Eigen::Map<Eigen::RowVectorXf> pooled_hidden(ws.pooled_hidden.data() + static_cast<int64_t>(s) * width, width);
    Eigen::Map<Eigen::RowVectorXf> pooled_ffn(ws.pooled_ffn.data() + static_cast<int64_t>(s) * second_hidden,
                                              second_hidden);
    for (int t = offsets[s]; t < offsets[s + 1]; ++t) {
      pooled_hidden += Eigen::Map<const Eigen::RowVectorXf>(ws.hidden.data() + static_cast<int64_t>(t) * width, width);
      pooled_ffn +=
          Eigen::Map<const Eigen::RowVectorXf>(ws.ffn.data() + static_cast<int64_t>(t) * second_hidden, second_hidden);
    }
    pooled_hidden *= inverse_length;
    pooled_ffn *= inverse_length;
  }
  second.ffn_out.apply(ws.pooled_ffn.data(), count, second_hidden, ws.pooled_hidden.data(), width,
                       {second.ffn_out_bias.data(), true});
  finish(ws.pooled_hidden.data(), count, out);
}

UseLiteTopShape UseLiteModel::top_shape(int layers) const {
  if (layers < 1 || layers > 2) throw Error("USE-lite has 2 transformer layers: fine-tune 1 or 2 of them");
  UseLiteTopShape shape;
  for (int i = 2 - layers; i < 2; ++i) {
    const Layer& l = layers_[i];
    shape.layers.push_back({l.input_width, l.width, l.heads, l.head_width, l.ffn_in.n(), l.attention_scale});
  }
  shape.output_width = output_width_;
  shape.norm_epsilon = norm_epsilon_;
  shape.l2_epsilon = l2_epsilon_;
  return shape;
}

std::vector<float> UseLiteModel::top_parameters(int layers) const {
  const UseLiteTopShape shape = top_shape(layers);
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(shape.parameter_count()));
  for (int i = 2 - layers; i < 2; ++i) {
    const Layer& l = layers_[i];
    append(l.norm_scale, out);
    append(l.norm_bias, out);
    append_unpacked(l.qkv.weights, out);
    append(l.qkv_bias, out);
    append_unpacked(l.output.weights, out);
    append(l.output_bias, out);
    if (l.input_width != l.width) {
      append_unpacked(l.residual, out);
      append(l.residual_bias, out);
    }
    append(l.ffn_norm_scale, out);
    append(l.ffn_norm_bias, out);
    append_unpacked(l.ffn_in.weights, out);
    append(l.ffn_in_bias, out);
    append_unpacked(l.ffn_out.weights, out);
    append(l.ffn_out_bias, out);
  }
  append_unpacked(tanh_weights_, out);
  append(tanh_bias_, out);
  return out;
}

}  // namespace relmem
