#include "relmem/encoders/bert_encoder.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <numeric>
#include <optional>

#include "bert_model.hpp"
#include "../common/json_file.hpp"
#include "relmem/encoders/safetensors.hpp"

namespace relmem {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kParallelMinTexts = 64;  // fewer are tokenized on one thread

// Where the parts of a sentence-transformers directory live; a plain Hugging Face directory has only the first.
struct ModelLayout {
  fs::path transformer_dir;
  std::optional<fs::path> pooling_config;
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ModelLayout read_layout(const std::string& model_dir) {
  const fs::path dir(model_dir);
  if (!fs::is_directory(dir)) throw Error("BERT model directory " + model_dir + " does not exist");
  ModelLayout layout{dir, std::nullopt};
  const std::string modules_file = (dir / "modules.json").string();
  if (auto modules = read_json_file_if_present(modules_file)) {
    if (!modules->is_array()) throw Error(modules_file + ": expected a JSON array of modules");
    for (const auto& module : *modules) {
      if (!module.is_object() || !module.contains("type") || !module["type"].is_string()) {
        throw Error(modules_file + ": every module needs a 'type' string");
      }
      const std::string type = module["type"].get<std::string>();
      const bool has_path = module.contains("path") && module["path"].is_string();
      const std::string path = has_path ? module["path"].get<std::string>() : "";
      if (ends_with(type, ".Transformer")) layout.transformer_dir = dir / path;
      if (ends_with(type, ".Pooling")) layout.pooling_config = dir / path / "config.json";
    }
  } else if (fs::exists(dir / "1_Pooling" / "config.json")) {
    layout.pooling_config = dir / "1_Pooling" / "config.json";
  }
  return layout;
}

std::string config_path(const ModelLayout& layout) { return (layout.transformer_dir / "config.json").string(); }

WordPieceTokenizer load_tokenizer(const std::string& model_dir, const BertEncoderOptions& options) {
  const ModelLayout layout = read_layout(model_dir);
  const BertConfig config = BertConfig::read(config_path(layout));
  WordPieceOptions tokenizer_options = WordPieceTokenizer::read_options(layout.transformer_dir.string());
  int max_length = options.max_length;
  if (max_length == 0) {
    max_length = tokenizer_options.max_length;
    const std::string sbert_file = (fs::path(model_dir) / "sentence_bert_config.json").string();
    if (auto sbert = read_json_file_if_present(sbert_file)) {
      const auto& value = sbert->contains("max_seq_length") ? (*sbert)["max_seq_length"] : nlohmann::json();
      if (!value.is_null() && !value.is_number_integer()) {
        throw Error(sbert_file + ": max_seq_length must be an integer");
      }
      if (value.is_number_integer()) max_length = value.get<int>();
    }
  }
  if (max_length < 2) throw Error("BERT max_length must be at least 2, got " + std::to_string(max_length));
  tokenizer_options.max_length = std::min(max_length, config.max_positions);
  const std::string vocab = (layout.transformer_dir / "vocab.txt").string();
  return WordPieceTokenizer(WordPieceTokenizer::read_vocab(vocab), tokenizer_options);
}

}  // namespace

BertEncoder::BertEncoder(const std::string& model_dir, BertEncoderOptions options)
    : model_dir_(model_dir), options_(options), tokenizer_(load_tokenizer(model_dir, options)) {
  if (options_.batch_size < 1) throw Error("BERT batch_size must be positive");
  const ModelLayout layout = read_layout(model_dir);
  const BertConfig config = BertConfig::read(config_path(layout));
  hidden_size_ = config.hidden_size;
  if (tokenizer_.vocab_size() > static_cast<std::size_t>(config.vocab_size)) {
    throw Error("vocab.txt has " + std::to_string(tokenizer_.vocab_size()) + " tokens but the model only " +
                std::to_string(config.vocab_size));
  }
  if (layout.pooling_config) pooling_ = read_pooling(layout.pooling_config->string());
  transformer_dir_ = layout.transformer_dir.string();
  const fs::path weights_path = layout.transformer_dir / "model.safetensors";
  if (!fs::exists(weights_path)) {
    throw Error("no model.safetensors in " + layout.transformer_dir.string() +
                " (pytorch_model.bin and sharded checkpoints are not supported)");
  }
  model_ = std::make_unique<const BertModel>(config, SafetensorsFile(weights_path.string()),
                                             options_.half_weights ? gemm::Storage::kHalf : gemm::Storage::kFloat);
}

BertEncoder::~BertEncoder() = default;

bool BertEncoder::uses_half_weights() const { return model_->weight_storage() == gemm::Storage::kHalf; }

std::vector<BertEncoder::Pooling> BertEncoder::read_pooling(const std::string& file) const {
  const nlohmann::json pooling = read_json_file(file);
  if (!pooling.is_object()) throw Error(file + ": expected a JSON object");
  auto flag = [&](const char* key) {
    return pooling.contains(key) && pooling[key].is_boolean() && pooling[key].get<bool>();
  };
  if (flag("pooling_mode_weightedmean_tokens") || flag("pooling_mode_lasttoken")) {
    throw Error(file + ": weighted-mean and last-token pooling are not supported (cls, max, mean, mean_sqrt_len)");
  }
  std::vector<Pooling> modes;
  if (flag("pooling_mode_cls_token")) modes.push_back(Pooling::kCls);
  if (flag("pooling_mode_max_tokens")) modes.push_back(Pooling::kMax);
  if (flag("pooling_mode_mean_tokens")) modes.push_back(Pooling::kMean);
  if (flag("pooling_mode_mean_sqrt_len_tokens")) modes.push_back(Pooling::kMeanSqrtLength);
  if (modes.empty()) throw Error(file + ": no pooling mode is enabled");
  if (pooling.contains("word_embedding_dimension") && pooling["word_embedding_dimension"] != hidden_size_) {
    throw Error(file + ": word_embedding_dimension does not match hidden_size " + std::to_string(hidden_size_));
  }
  return modes;
}

RowMatrix BertEncoder::encode(const std::vector<std::string>& texts) const {
  std::vector<std::vector<int32_t>> sequences(texts.size());
#pragma omp parallel for schedule(dynamic, 16) if (texts.size() >= kParallelMinTexts)
  for (std::size_t i = 0; i < texts.size(); ++i) sequences[i] = tokenizer_.encode(texts[i]);
  return encode_ids(sequences);
}

RowMatrix BertEncoder::encode_ids(const std::vector<std::vector<int32_t>>& sequences) const {
  const BertConfig& config = model_->config();
  for (const auto& ids : sequences) {
    if (ids.empty()) throw Error("BERT cannot encode an empty token sequence");
    if (ids.size() > static_cast<std::size_t>(config.max_positions)) {
      throw Error("BERT sequence of " + std::to_string(ids.size()) + " tokens exceeds the " +
                  std::to_string(config.max_positions) + " position embeddings");
    }
    for (int32_t id : ids) {
      if (id < 0 || id >= config.vocab_size) {
        throw Error("token id " + std::to_string(id) + " is outside the vocabulary");
      }
    }
  }
  RowMatrix out(static_cast<Eigen::Index>(sequences.size()), dim());
  // Batches of similar lengths: the work of a batch grows with its longest sequences.
  std::vector<std::size_t> order(sequences.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sequences[a].size() < sequences[b].size(); });
  // At least one batch per thread: threads that each run whole batches meet once per call, where threads sharing
  // every matrix product of one batch meet at each product (and wait long for each other on a busy machine).
  const std::size_t threads = static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
  const std::size_t batch_size =
      std::max<std::size_t>(1, std::min<std::size_t>(options_.batch_size, (sequences.size() + threads - 1) / threads));
  const std::size_t batches = (sequences.size() + batch_size - 1) / batch_size;
  if (batches <= 1) {
    embed_batch(sequences, order, 0, sequences.size(), out);  // the matrix products use the threads
  } else {
    std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t b = 0; b < batches; ++b) {
      try {
        embed_batch(sequences, order, b * batch_size, std::min(sequences.size(), (b + 1) * batch_size), out);
      } catch (...) {
#pragma omp critical
        failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
  }
  if (options_.normalize) {
    // A zero row stays zero rather than becoming NaN.
    const Eigen::VectorXf norms = out.rowwise().norm().cwiseMax(1e-12f);
    out.array().colwise() /= norms.array();
  }
  return out;
}

void BertEncoder::embed_batch(const std::vector<std::vector<int32_t>>& sequences,
                              const std::vector<std::size_t>& order, std::size_t begin, std::size_t end,
                              RowMatrix& out) const {
  std::vector<const std::vector<int32_t>*> batch;
  std::vector<Eigen::Index> offsets{0};
  for (std::size_t i = begin; i < end; ++i) {
    batch.push_back(&sequences[order[i]]);
    offsets.push_back(offsets.back() + static_cast<Eigen::Index>(sequences[order[i]].size()));
  }
  const RowMatrix hidden = model_->forward(batch, offsets);
  const int h = hidden_size_;
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto rows = hidden.middleRows(offsets[s], offsets[s + 1] - offsets[s]);
    auto target = out.row(static_cast<Eigen::Index>(order[begin + s]));
    for (std::size_t m = 0; m < pooling_.size(); ++m) {
      auto segment = target.segment(static_cast<Eigen::Index>(m) * h, h);
      switch (pooling_[m]) {
        case Pooling::kCls: segment = rows.row(0); break;
        case Pooling::kMax: segment = rows.colwise().maxCoeff(); break;
        case Pooling::kMean: segment = rows.colwise().mean(); break;
        case Pooling::kMeanSqrtLength:
          segment = rows.colwise().sum() / std::sqrt(static_cast<float>(rows.rows()));
          break;
      }
    }
  }
}

}  // namespace relmem
