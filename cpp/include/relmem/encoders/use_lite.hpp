#pragma once
// Universal Sentence Encoder lite (Google, Apache-2.0), the default embedded encoder: SentencePiece tokens, a
// 2-layer transformer and a tanh projection to 512 dimensions, matching the TensorFlow.js original to cosine
// >= 0.9999. Weights come from scripts/install_models.sh (`make setup`); nothing is downloaded at run time.
// "use-lite-int8" (opt-in) runs its large matrix products in int8 on AVX512-VNNI CPUs: faster, and within cosine
// 0.998 of the original on the reference sentences (tests/cpp/test_use_lite.cpp).
#include <memory>
#include <string>

#include "relmem/encoders/encoder.hpp"
#include "relmem/encoders/finetuning/use_lite_top.hpp"
#include "relmem/encoders/tokenizers/sentencepiece.hpp"

namespace relmem {

class UseLiteModel;

enum class UseLitePrecision { kFloat32, kInt8 };

class UseLiteEncoder : public Encoder {
 public:
  // The model directory: `model_dir` when given, else the first folder of use_lite_search_path() (model_home.hpp)
  // holding the weights. relmem::Error, with how to install, when it is missing or corrupt, and for kInt8 on a CPU
  // without AVX512-VNNI.
  explicit UseLiteEncoder(const std::string& model_dir = "", UseLitePrecision precision = UseLitePrecision::kFloat32);
  ~UseLiteEncoder() override;

  // Texts are tokenized and sorted by length, then embedded in batches on all OpenMP threads.
  RowMatrix encode(const std::vector<std::string>& texts) const override;
  int dim() const override;
  std::string name() const override { return precision_ == UseLitePrecision::kInt8 ? "use-lite-int8" : "use-lite"; }

  const std::string& model_dir() const { return model_dir_; }
  // Token ids as the model sees them (at most max_tokens(), the rest of a long text is dropped).
  std::vector<int32_t> tokenize(const std::string& text) const;
  int max_tokens() const;
  const SentencePieceTokenizer& tokenizer() const { return tokenizer_; }

  static std::string resolve_model_dir(const std::string& model_dir);

  // Fine-tuning the top `layers` (1 or 2) transformer layers: a trainable copy of them and the tanh head with this
  // encoder's weights, and the token rows entering them (the frozen part, run once per text).
  UseLiteTop top(int layers) const;
  TokenStates token_states(const std::vector<std::string>& texts, int layers) const;
  // Vectors of texts with the top layers replaced by `top`; relmem::Error when its shape is not this encoder's.
  RowMatrix encode_with_top(const std::vector<std::string>& texts, const UseLiteTop& top) const;
  void check_top(const UseLiteTop& top) const;

 private:
  UseLitePrecision precision_;
  std::string model_dir_;
  SentencePieceTokenizer tokenizer_;
  std::unique_ptr<UseLiteModel> model_;
};

}  // namespace relmem
