#include "bert_model.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "../common/json_file.hpp"

namespace relmem {
namespace {

// Below these sizes a loop stays on one thread: waking the team costs more than the work.
constexpr Eigen::Index kParallelMinRows = 256;       // element-wise passes over token rows
constexpr Eigen::Index kParallelMinAttention = 64;  // tokens in the batch, for the per-(sequence, head) attention

int positive_int(const nlohmann::json& config, const char* key, const std::string& file) {
  if (!config.contains(key) || !config[key].is_number_integer() || config[key].get<int64_t>() <= 0 ||
      config[key].get<int64_t>() > (1 << 30)) {
    throw Error(file + ": '" + key + "' must be a positive integer");
  }
  return config[key].get<int>();
}

// GELU with erf within 1.5e-7 (Abramowitz and Stegun 7.1.26), in array operations that vectorize: std::erf, one
// call per value, was 9% of a short text's forward pass. erf is odd, so x (1 + erf(x / √2)) = x + |x| erf(|x| / √2),
// which needs no sign(): Eigen does not vectorize sign(), and one such term evaluates the whole expression, exp
// included, a value at a time.
void gelu_erf(Eigen::Map<Eigen::ArrayXf> x) {
  const Eigen::ArrayXf magnitude = x.abs();
  const Eigen::ArrayXf a = magnitude * static_cast<float>(M_SQRT1_2);
  const Eigen::ArrayXf t = 1.0f / (1.0f + 0.3275911f * a);
  const Eigen::ArrayXf poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  x = 0.5f * (x + magnitude * (1.0f - poly * (-a.square()).exp()));
}

void multiply(const RowMatrix& in, const gemm::PackedMatrix& weight, const std::vector<float>& bias, RowMatrix& out,
              bool accumulate) {
  gemm::multiply(in.data(), static_cast<int>(in.rows()), in.cols(), weight, out.data(), out.cols(),
                 {bias.data(), accumulate, false});
}

}  // namespace

BertConfig BertConfig::read(const std::string& file) {
  const nlohmann::json json = read_json_file(file);
  if (!json.is_object()) throw Error(file + ": expected a JSON object");
  if (json.contains("model_type") && json["model_type"] != "bert") {
    throw Error(file + ": model_type " + json["model_type"].dump() + " is not supported (only 'bert')");
  }
  if (json.contains("position_embedding_type") && json["position_embedding_type"] != "absolute") {
    throw Error(file + ": only absolute position embeddings are supported");
  }
  BertConfig config;
  config.hidden_size = positive_int(json, "hidden_size", file);
  config.heads = positive_int(json, "num_attention_heads", file);
  config.layers = positive_int(json, "num_hidden_layers", file);
  config.intermediate_size = positive_int(json, "intermediate_size", file);
  config.vocab_size = positive_int(json, "vocab_size", file);
  config.max_positions = positive_int(json, "max_position_embeddings", file);
  config.type_vocab_size = positive_int(json, "type_vocab_size", file);
  if (config.hidden_size % config.heads != 0) {
    throw Error(file + ": hidden_size is not a multiple of num_attention_heads");
  }
  if (json.contains("layer_norm_eps")) {
    if (!json["layer_norm_eps"].is_number()) throw Error(file + ": 'layer_norm_eps' must be a number");
    config.layer_norm_eps = json["layer_norm_eps"].get<float>();
  }
  if (json.contains("hidden_act") && !json["hidden_act"].is_string()) {
    throw Error(file + ": 'hidden_act' must be a string");
  }
  const std::string act = json.value("hidden_act", std::string("gelu"));
  if (act == "gelu") {
    config.activation = Activation::kGeluErf;
  } else if (act == "gelu_new" || act == "gelu_pytorch_tanh") {
    config.activation = Activation::kGeluTanh;
  } else if (act == "relu") {
    config.activation = Activation::kRelu;
  } else {
    throw Error(file + ": hidden_act '" + act + "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)");
  }
  return config;
}

BertModel::BertModel(const BertConfig& config, const SafetensorsFile& weights, gemm::Storage storage)
    : config_(config) {
  // Checkpoints saved from BertFor* task models put everything under "bert.".
  const std::string prefix = weights.contains("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const int h = config.hidden_size;
  auto layer_norm_at = [&](const std::string& name) {
    return LayerNorm{weights.read_vector(name + ".weight", h).transpose(),
                     weights.read_vector(name + ".bias", h).transpose()};
  };
  // torch.nn.Linear stores [out, in]; the product wants it as in x out, read through strides.
  auto pack = [storage](const float* out_by_in, int in, int out) {
    gemm::PackedMatrix packed;
    packed.pack(out_by_in, in, out, 1, in, gemm::best_kernel(), storage);
    return packed;
  };
  auto dense_at = [&](const std::string& name, int in, int out) {
    const RowMatrix weight = weights.read_matrix(name + ".weight", out, in);
    const Eigen::VectorXf bias = weights.read_vector(name + ".bias", out);
    return Dense{pack(weight.data(), in, out), std::vector<float>(bias.data(), bias.data() + out)};
  };

  const std::string embeddings = prefix + "embeddings.";
  word_embeddings_ = weights.read_matrix(embeddings + "word_embeddings.weight", config.vocab_size, h);
  position_embeddings_ = weights.read_matrix(embeddings + "position_embeddings.weight", config.max_positions, h);
  token_type_embedding_ =
      weights.read_matrix(embeddings + "token_type_embeddings.weight", config.type_vocab_size, h).row(0);
  embedding_norm_ = layer_norm_at(embeddings + "LayerNorm");
  for (int i = 0; i < config.layers; ++i) {
    const std::string base = prefix + "encoder.layer." + std::to_string(i) + ".";
    Layer layer;
    RowMatrix qkv_weight(3 * h, h);  // [out, in] of query, key and value stacked
    std::vector<float> qkv_bias;
    for (int part = 0; part < 3; ++part) {
      const std::string name = base + "attention.self." + std::array<const char*, 3>{"query", "key", "value"}[part];
      qkv_weight.middleRows(part * h, h) = weights.read_matrix(name + ".weight", h, h);
      const Eigen::VectorXf bias = weights.read_vector(name + ".bias", h);
      qkv_bias.insert(qkv_bias.end(), bias.data(), bias.data() + h);
    }
    layer.qkv = Dense{pack(qkv_weight.data(), h, 3 * h), qkv_bias};
    layer.attention_output = dense_at(base + "attention.output.dense", h, h);
    layer.attention_norm = layer_norm_at(base + "attention.output.LayerNorm");
    layer.intermediate = dense_at(base + "intermediate.dense", h, config.intermediate_size);
    layer.output = dense_at(base + "output.dense", config.intermediate_size, h);
    layer.output_norm = layer_norm_at(base + "output.LayerNorm");
    layers_.push_back(std::move(layer));
  }
}

RowMatrix BertModel::forward(const std::vector<const std::vector<int32_t>*>& sequences,
                             const std::vector<Eigen::Index>& offsets, int layers) const {
  const Eigen::Index tokens = offsets.back();
  const int h = config_.hidden_size;
  RowMatrix x(tokens, h);
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const auto& ids = *sequences[s];
    for (std::size_t p = 0; p < ids.size(); ++p) {
      x.row(offsets[s] + static_cast<Eigen::Index>(p)) =
          word_embeddings_.row(ids[p]) + position_embeddings_.row(static_cast<Eigen::Index>(p)) + token_type_embedding_;
    }
  }
  layer_norm(embedding_norm_, x);

  RowMatrix qkv(tokens, 3 * h), context(tokens, h), intermediate(tokens, config_.intermediate_size);
  const std::size_t run = layers < 0 ? layers_.size() : std::min(layers_.size(), static_cast<std::size_t>(layers));
  for (std::size_t i = 0; i < run; ++i) {
    const Layer& layer = layers_[i];
    multiply(x, layer.qkv.weight, layer.qkv.bias, qkv, false);
    self_attention(qkv, offsets, context);
    multiply(context, layer.attention_output.weight, layer.attention_output.bias, x, true);  // x += attention
    layer_norm(layer.attention_norm, x);
    multiply(x, layer.intermediate.weight, layer.intermediate.bias, intermediate, false);
    activate(intermediate);
    multiply(intermediate, layer.output.weight, layer.output.bias, x, true);  // x += feed-forward
    layer_norm(layer.output_norm, x);
  }
  return x;
}

void BertModel::self_attention(const RowMatrix& qkv, const std::vector<Eigen::Index>& offsets,
                               RowMatrix& context) const {
  const int h = config_.hidden_size;
  const int head_size = h / config_.heads;
  const int64_t stride = 3 * h;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  const int sequences = static_cast<int>(offsets.size()) - 1;
  const int tasks = sequences * config_.heads;
#pragma omp parallel for schedule(dynamic) if (!omp_in_parallel() && offsets.back() >= kParallelMinAttention)
  for (int task = 0; task < tasks; ++task) {
    const int s = task / config_.heads;
    const int column = (task % config_.heads) * head_size;
    const int length = static_cast<int>(offsets[s + 1] - offsets[s]);
    const float* base = qkv.data() + offsets[s] * stride;
    thread_local gemm::PackedMatrix keys, values;
    thread_local AlignedFloats scores;
    scores.resize(static_cast<std::size_t>(length) * length);
    keys.pack(base + h + column, head_size, length, 1, stride);  // K^T
    gemm::multiply(base + column, length, stride, keys, scores.data(), length);
    // The softmax's exp over the whole block at once: row by row, a short row's unaligned start and end took most
    // of its values through scalar expf.
    for (int i = 0; i < length; ++i) {
      Eigen::Map<Eigen::ArrayXf> row(scores.data() + static_cast<int64_t>(i) * length, length);
      row = (row - row.maxCoeff()) * scale;
    }
    Eigen::Map<Eigen::ArrayXf> block(scores.data(), static_cast<Eigen::Index>(length) * length);
    block = block.exp();
    for (int i = 0; i < length; ++i) {
      Eigen::Map<Eigen::ArrayXf> row(scores.data() + static_cast<int64_t>(i) * length, length);
      row /= row.sum();
    }
    values.pack(base + 2 * h + column, length, head_size, stride, 1);
    gemm::multiply(scores.data(), length, length, values, context.data() + offsets[s] * h + column, h);
  }
}

void BertModel::layer_norm(const LayerNorm& norm, RowMatrix& x) const {
  const float eps = config_.layer_norm_eps;
#pragma omp parallel for if (!omp_in_parallel() && x.rows() >= kParallelMinRows)
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    auto row = x.row(i).array();
    row -= row.mean();
    const float inverse_deviation = 1.0f / std::sqrt(row.square().mean() + eps);
    row = row * inverse_deviation * norm.gamma.array() + norm.beta.array();
  }
}

void BertModel::activate(RowMatrix& x) const {
  const auto activation = config_.activation;
  const float tanh_scale = std::sqrt(2.0f / static_cast<float>(M_PI));
#pragma omp parallel for if (!omp_in_parallel() && x.rows() >= kParallelMinRows)
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    Eigen::Map<Eigen::ArrayXf> v(x.row(i).data(), x.cols());
    switch (activation) {
      case BertConfig::Activation::kGeluErf:
        gelu_erf(v);
        break;
      case BertConfig::Activation::kGeluTanh:
        v = 0.5f * v * (1.0f + (tanh_scale * (v + 0.044715f * v.cube())).tanh());
        break;
      case BertConfig::Activation::kRelu:
        v = v.max(0.0f);
        break;
    }
  }
}

}  // namespace relmem
