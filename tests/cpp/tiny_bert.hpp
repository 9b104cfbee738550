#pragma once
// A complete Hugging Face BERT directory with random weights, small enough for tests of the encoder and its training.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "relmem/encoders/safetensors.hpp"

namespace relmem_test {

constexpr int kTinyHidden = 8, kTinyHeads = 2, kTinyLayers = 2, kTinyIntermediate = 16, kTinyPositions = 16;

inline std::vector<float> random_values(std::size_t n, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

inline std::vector<std::string> small_vocab() {
  return {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "##s", "un", "##aff",
          "##able", "##a", ",", ".", "!", "'", "cafe", "caf", "##e", "é", "北", "京", "Cat"};
}

// `dtype` is the tensors' stored type; `skip` leaves one tensor out.
inline void write_tiny_bert(const std::string& dir, const std::string& dtype = "F32", const std::string& skip = "",
                            const std::vector<std::string>& vocab = small_vocab()) {
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/vocab.txt");
    for (const auto& token : vocab) out << token << "\n";
  }
  const nlohmann::json config = {{"model_type", "bert"},
                                 {"hidden_size", kTinyHidden},
                                 {"num_attention_heads", kTinyHeads},
                                 {"num_hidden_layers", kTinyLayers},
                                 {"intermediate_size", kTinyIntermediate},
                                 {"vocab_size", vocab.size()},
                                 {"max_position_embeddings", kTinyPositions},
                                 {"type_vocab_size", 2},
                                 {"layer_norm_eps", 1e-12},
                                 {"hidden_act", "gelu"}};
  std::ofstream(dir + "/config.json") << config.dump();
  std::vector<relmem::TensorToWrite> tensors;
  unsigned seed = 1;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale, float offset = 0.0f) {
    if (name == skip) return;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> values = random_values(static_cast<std::size_t>(n), seed++, scale);
    for (float& v : values) v += offset;
    tensors.push_back({name, dtype, shape, values});
  };
  auto dense = [&](const std::string& name, int in, int out) {
    add(name + ".weight", {out, in}, 0.3f);
    add(name + ".bias", {out}, 0.1f);
  };
  auto norm = [&](const std::string& name) {
    add(name + ".weight", {kTinyHidden}, 0.1f, 1.0f);
    add(name + ".bias", {kTinyHidden}, 0.1f);
  };
  add("embeddings.word_embeddings.weight", {static_cast<int64_t>(vocab.size()), kTinyHidden}, 1.0f);
  add("embeddings.position_embeddings.weight", {kTinyPositions, kTinyHidden}, 1.0f);
  add("embeddings.token_type_embeddings.weight", {2, kTinyHidden}, 1.0f);
  norm("embeddings.LayerNorm");
  for (int i = 0; i < kTinyLayers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    dense(p + "attention.self.query", kTinyHidden, kTinyHidden);
    dense(p + "attention.self.key", kTinyHidden, kTinyHidden);
    dense(p + "attention.self.value", kTinyHidden, kTinyHidden);
    dense(p + "attention.output.dense", kTinyHidden, kTinyHidden);
    norm(p + "attention.output.LayerNorm");
    dense(p + "intermediate.dense", kTinyHidden, kTinyIntermediate);
    dense(p + "output.dense", kTinyIntermediate, kTinyHidden);
    norm(p + "output.LayerNorm");
  }
  relmem::write_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
}

}  // namespace relmem_test
