#include "relmem/encoders/use_lite.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <filesystem>

#include "../linalg/int8_gemm.hpp"
#include "relmem/encoders/model_home.hpp"
#include "relmem/encoders/tfjs_weights.hpp"
#include "use_lite_model.hpp"

namespace relmem {
namespace {

const std::string kInstallHint = " (install the USE-lite weights with `make setup` or scripts/install_models.sh)";

// Sentences are cut into batches of about this many tokens, at least one batch per thread when there is enough.
constexpr int64_t kMaxBatchTokens = 1024;
constexpr int64_t kMinBatchTokensPerThread = 128;

SentencePieceTokenizer load_tokenizer(const std::string& model_dir) {
  try {
    return SentencePieceTokenizer::from_vocab_json((std::filesystem::path(model_dir) / "vocab.json").string());
  } catch (const Error& e) {
    throw Error(e.what() + kInstallHint);
  }
}

// Consecutive runs of `order` (sentences sorted by length) holding about the same number of tokens.
std::vector<std::pair<std::size_t, std::size_t>> batches(const std::vector<int>& order,
                                                         const std::vector<std::vector<int32_t>>& ids) {
  int64_t total = 0;
  for (int i : order) total += static_cast<int64_t>(ids[i].size());
  const int64_t threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  int64_t count = std::max<int64_t>(1, (total + kMaxBatchTokens - 1) / kMaxBatchTokens);
  if (threads > 1 && total >= threads * kMinBatchTokensPerThread) {
    count = (std::max(count, threads) + threads - 1) / threads * threads;  // a multiple of the threads, for balance
  }
  const int64_t target = (total + count - 1) / count;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t begin = 0;
  int64_t tokens = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    tokens += static_cast<int64_t>(ids[order[i]].size());
    if (tokens >= target || i + 1 == order.size()) {
      out.emplace_back(begin, i + 1);
      begin = i + 1;
      tokens = 0;
    }
  }
  return out;
}

// Checked before anything is loaded, so that the message is about the CPU, not the installation.
UseLitePrecision supported(UseLitePrecision precision) {
  if (precision == UseLitePrecision::kInt8 && !gemm::int8_available()) {
    throw Error("encoder 'use-lite-int8' needs a CPU with AVX512-VNNI (vpdpbusd), which this one lacks "
                "(or RELMEM_GEMM_KERNEL forces a non-AVX-512 kernel): use 'use-lite'");
  }
  return precision;
}

}  // namespace

std::string UseLiteEncoder::resolve_model_dir(const std::string& model_dir) {
  if (!model_dir.empty()) {
    if (!std::filesystem::is_directory(model_dir)) {
      throw Error("USE-lite model directory " + model_dir + " does not exist" + kInstallHint);
    }
    return model_dir;
  }
  const std::string found = find_use_lite_dir();
  if (!found.empty()) return found;
  std::string looked;
  for (const auto& dir : use_lite_search_path()) looked += (looked.empty() ? "" : ", ") + dir;
  if (looked.empty()) looked = "nowhere: HOME is unset";
  throw Error("USE-lite weights not found (looked in: " + looked + ")" + kInstallHint);
}

UseLiteEncoder::UseLiteEncoder(const std::string& model_dir, UseLitePrecision precision)
    : precision_(supported(precision)),
      model_dir_(resolve_model_dir(model_dir)),
      tokenizer_(load_tokenizer(model_dir_)) {
  try {
    model_ = std::make_unique<UseLiteModel>(TfjsWeights::load(model_dir_, kInstallHint),
                                            precision_ == UseLitePrecision::kInt8);
  } catch (const Error& e) {
    const std::string message = e.what();
    throw Error(message.find(kInstallHint) == std::string::npos ? message + kInstallHint : message);
  }
  if (tokenizer_.vocabulary_size() > static_cast<std::size_t>(model_->vocabulary_size())) {
    throw Error(model_dir_ + "/vocab.json has more pieces than the model has embeddings" + kInstallHint);
  }
}

UseLiteEncoder::~UseLiteEncoder() = default;

int UseLiteEncoder::dim() const { return model_->dim(); }

int UseLiteEncoder::max_tokens() const { return model_->max_tokens(); }

std::vector<int32_t> UseLiteEncoder::tokenize(const std::string& text) const {
  std::vector<int32_t> ids = tokenizer_.encode(text);
  if (ids.size() > static_cast<std::size_t>(model_->max_tokens())) ids.resize(model_->max_tokens());
  return ids;
}

RowMatrix UseLiteEncoder::encode(const std::vector<std::string>& texts) const {
  const int count = static_cast<int>(texts.size());
  RowMatrix out(count, dim());
  std::vector<std::vector<int32_t>> ids(count);
#pragma omp parallel for schedule(dynamic, 16) if (!omp_in_parallel() && count > 64)
  for (int i = 0; i < count; ++i) ids[i] = tokenize(texts[i]);

  std::vector<int> order;
  for (int i = 0; i < count; ++i) {
    if (ids[i].empty()) {
      out.row(i) = Eigen::Map<const Eigen::RowVectorXf>(model_->empty_embedding().data(), dim());
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ids[a].size() < ids[b].size(); });
  const auto runs = batches(order, ids);

  const auto embed_run = [&](std::size_t run) {
    const auto [begin, end] = runs[run];
    std::vector<const std::vector<int32_t>*> sentences;
    for (std::size_t i = begin; i < end; ++i) sentences.push_back(&ids[order[i]]);
    RowMatrix rows(static_cast<Eigen::Index>(sentences.size()), dim());
    model_->embed(sentences, rows.data());
    for (std::size_t i = begin; i < end; ++i) out.row(order[i]) = rows.row(static_cast<Eigen::Index>(i - begin));
  };
  if (runs.size() == 1) {
    embed_run(0);  // one batch: the matrix products use the threads
    return out;
  }
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t run = 0; run < runs.size(); ++run) {
    try {
      embed_run(run);
    } catch (...) {
#pragma omp critical
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

UseLiteTop UseLiteEncoder::top(int layers) const {
  return UseLiteTop(model_->top_shape(layers), model_->top_parameters(layers));
}

TokenStates UseLiteEncoder::token_states(const std::vector<std::string>& texts, int layers) const {
  const UseLiteTopShape shape = model_->top_shape(layers);
  const int count = static_cast<int>(texts.size());
  std::vector<std::vector<int32_t>> ids(count);
#pragma omp parallel for schedule(dynamic, 16) if (!omp_in_parallel() && count > 64)
  for (int i = 0; i < count; ++i) ids[i] = tokenize(texts[i]);
  return stack_token_states(ids, shape.input_width(), kMaxBatchTokens,
                            [&](const std::vector<const std::vector<int32_t>*>& texts, float* rows) {
                              model_->token_states(texts, layers, rows);
                            });
}

void UseLiteEncoder::check_top(const UseLiteTop& top) const {
  if (top.empty()) throw Error("the fine-tuned encoder top has no layers");
  if (top.shape().layer_count() > 2 || !(top.shape() == model_->top_shape(top.shape().layer_count()))) {
    throw Error("the fine-tuned encoder layers do not match the USE-lite model in " + model_dir_ +
                " (different layer sizes or constants)");
  }
}

RowMatrix UseLiteEncoder::encode_with_top(const std::vector<std::string>& texts, const UseLiteTop& top) const {
  check_top(top);
  return top.encode(token_states(texts, top.shape().layer_count()));
}

}  // namespace relmem
