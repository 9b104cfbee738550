// BertEncoder's fine-tuning side: the trainable copy of its top layers, the token states entering them, and the
// fine-tuned model directory.
#include <omp.h>

#include <filesystem>
#include <map>

#include "bert_model.hpp"
#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/safetensors.hpp"

namespace relmem {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxRunTokens = 4096;  // tokens per forward pass of token_states

std::string weights_file(const std::string& transformer_dir) {
  return (fs::path(transformer_dir) / "model.safetensors").string();
}

std::string prefix_of(const SafetensorsFile& weights) {
  return weights.contains("bert.embeddings.word_embeddings.weight") ? "bert." : "";
}

std::string layer_name(const std::string& prefix, int layer, const std::string& tensor, const std::string& kind) {
  return prefix + "encoder.layer." + std::to_string(layer) + "." + tensor + "." + kind;
}

const char* const kQkvParts[3] = {"attention.self.query", "attention.self.key", "attention.self.value"};

// Moves one layer between Hugging Face's tensors (torch.nn.Linear's (out, in)) and the flat (in, out) layout.
// to_flat: tensors -> flat; otherwise flat -> tensors.
void convert_layer(const BertTopShape& shape, std::map<std::string, std::vector<float>>& tensors,
                   const std::string& prefix, int layer, float* flat, bool to_flat) {
  const int64_t w = shape.width;
  for (const auto& t : bert_layer_tensors(shape)) {
    float* at = flat + t.offset;
    if (t.name == "attention.self.qkv") {
      for (int part = 0; part < 3; ++part) {
        auto& values = tensors.at(layer_name(prefix, layer, kQkvParts[part], t.kind));
        for (int64_t out = 0; out < w; ++out) {
          if (t.kind == "bias") {
            (to_flat ? at[part * w + out] : values[out]) = (to_flat ? values[out] : at[part * w + out]);
            continue;
          }
          for (int64_t in = 0; in < w; ++in) {
            float& cell = at[in * 3 * w + part * w + out];
            float& value = values[out * w + in];
            (to_flat ? cell : value) = (to_flat ? value : cell);
          }
        }
      }
      continue;
    }
    auto& values = tensors.at(layer_name(prefix, layer, t.name, t.kind));
    if (t.shape.size() == 1) {
      for (int64_t i = 0; i < t.shape[0]; ++i) (to_flat ? at[i] : values[i]) = (to_flat ? values[i] : at[i]);
      continue;
    }
    const int64_t in = t.shape[0], out = t.shape[1];
    for (int64_t i = 0; i < in; ++i) {
      for (int64_t o = 0; o < out; ++o) {
        float& cell = at[i * out + o];
        float& value = values[o * in + i];
        (to_flat ? cell : value) = (to_flat ? value : cell);
      }
    }
  }
}

}  // namespace

int BertEncoder::layers() const { return model_->config().layers; }

void BertEncoder::check_fine_tunable(int top_layers) const {
  if (top_layers < 1 || top_layers > layers()) {
    throw Error("BERT fine-tuning: the top layers must be 1 to " + std::to_string(layers()) + ", got " +
                std::to_string(top_layers));
  }
  if (pooling_ != std::vector<Pooling>{Pooling::kMean} || !options_.normalize) {
    throw Error("BERT fine-tuning needs mean pooling alone and L2 normalization");
  }
  if (model_->config().activation != BertConfig::Activation::kGeluErf) {
    throw Error("BERT fine-tuning needs the exact GELU (hidden_act 'gelu')");
  }
}

BertTop BertEncoder::top(int top_layers) const {
  check_fine_tunable(top_layers);
  const BertConfig& config = model_->config();
  BertTopShape shape;
  shape.layers = top_layers;
  shape.width = config.hidden_size;
  shape.heads = config.heads;
  shape.hidden = config.intermediate_size;
  shape.norm_epsilon = config.layer_norm_eps;
  shape.l2_epsilon = 1e-24f;  // encode_ids divides by max(|y|, 1e-12)
  const SafetensorsFile weights(weights_file(transformer_dir_));
  const std::string prefix = prefix_of(weights);
  std::vector<float> parameters(static_cast<size_t>(shape.parameter_count()));
  for (int i = 0; i < top_layers; ++i) {
    const int layer = config.layers - top_layers + i;
    std::map<std::string, std::vector<float>> tensors;
    for (const auto& t : bert_layer_tensors(shape)) {
      if (t.name == "attention.self.qkv") {
        for (const char* part : kQkvParts) {
          const std::string name = layer_name(prefix, layer, part, t.kind);
          tensors[name] = weights.read_floats(name);
        }
      } else {
        const std::string name = layer_name(prefix, layer, t.name, t.kind);
        tensors[name] = weights.read_floats(name);
      }
    }
    convert_layer(shape, tensors, prefix, layer, parameters.data() + i * shape.layer_parameter_count(), true);
  }
  return BertTop(shape, std::move(parameters));
}

TokenStates BertEncoder::token_states(const std::vector<std::string>& texts, int top_layers) const {
  check_fine_tunable(top_layers);
  const int count = static_cast<int>(texts.size());
  std::vector<std::vector<int32_t>> ids(texts.size());
#pragma omp parallel for schedule(dynamic, 16) if (!omp_in_parallel() && count > 64)
  for (int i = 0; i < count; ++i) ids[static_cast<size_t>(i)] = tokenizer_.encode(texts[static_cast<size_t>(i)]);
  const int hidden = hidden_size_, frozen_layers = layers() - top_layers;
  return stack_token_states(ids, hidden, kMaxRunTokens, [&](const std::vector<const std::vector<int32_t>*>& batch,
                                                            float* rows) {
    std::vector<Eigen::Index> offsets{0};
    for (const auto* sequence : batch) offsets.push_back(offsets.back() + static_cast<Eigen::Index>(sequence->size()));
    Eigen::Map<RowMatrix>(rows, offsets.back(), hidden) = model_->forward(batch, offsets, frozen_layers);
  });
}

void BertEncoder::save_with_top(const BertTop& top, const std::string& out_dir) const {
  const BertTopShape expected = this->top(top.shape().layers).shape();
  if (!(top.shape() == expected)) throw Error("BERT fine-tuning: the top layers do not fit the model in " + model_dir_);
  if (fs::exists(out_dir)) throw Error(out_dir + " already exists");
  const fs::path source(model_dir_), target(out_dir), source_weights(weights_file(transformer_dir_));
  fs::create_directories(target);
  for (const auto& entry : fs::recursive_directory_iterator(source)) {
    const fs::path relative = fs::relative(entry.path(), source);
    if (entry.is_directory()) {
      fs::create_directories(target / relative);
    } else if (relative != "INSTALLED" && !fs::equivalent(entry.path(), source_weights)) {
      fs::copy_file(entry.path(), target / relative);
    }
  }
  const SafetensorsFile weights(source_weights.string());
  const std::string prefix = prefix_of(weights);
  std::map<std::string, std::vector<float>> tensors;
  std::vector<TensorToWrite> out;
  for (const auto& name : weights.names()) {
    const auto& info = weights.info(name);
    if (info.dtype != "F32" && info.dtype != "F16" && info.dtype != "BF16" && info.dtype != "F64") continue;
    tensors[name] = weights.read_floats(name);
  }
  std::vector<float> parameters = top.parameters();
  const int total = layers(), count = top.shape().layers;
  for (int i = 0; i < count; ++i) {
    convert_layer(top.shape(), tensors, prefix, total - count + i,
                  parameters.data() + i * top.shape().layer_parameter_count(), false);
  }
  for (auto& [name, values] : tensors) out.push_back({name, "F32", weights.info(name).shape, std::move(values)});
  auto metadata = weights.metadata();
  metadata["relmem_fine_tuned_layers"] = std::to_string(count);
  const fs::path target_weights = target / fs::relative(source_weights, source);
  write_safetensors(target_weights.string(), out, metadata);
}

}  // namespace relmem
