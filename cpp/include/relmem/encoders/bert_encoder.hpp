#pragma once
// BERT-family sentence encoder over a Hugging Face / sentence-transformers model directory:
// model.safetensors (F32, F16 or BF16), config.json, vocab.txt, tokenizer_config.json and, when present,
// modules.json, 1_Pooling/config.json and sentence_bert_config.json.
#include <memory>
#include <string>
#include <vector>

#include "relmem/encoders/encoder.hpp"
#include "relmem/encoders/finetuning/bert_top.hpp"
#include "relmem/encoders/tokenizers/wordpiece.hpp"

namespace relmem {

class BertModel;

struct BertEncoderOptions {
  // The Encoder contract is L2-normalized rows, so normalization is on for every model, whether or not its
  // modules.json lists a Normalize module (cosine similarities are the same either way). Off gives raw pooling.
  bool normalize = true;
  // 0: sentence_bert_config.json max_seq_length, else tokenizer_config.json model_max_length; never more than
  // config.json max_position_embeddings. Counts [CLS] and [SEP]; longer texts are truncated.
  int max_length = 0;
  // Most sentences per forward pass. Texts are sorted by length and cut into batches, at least one per thread, and
  // each thread runs whole batches; only a single text spreads its matrix products over the threads.
  int batch_size = 32;
  // What name() returns, a spec that load_encoder() resolves to this model again; "" gives "bert:<model_dir>".
  std::string spec;
  // The encoder layers' dense weights kept as fp16 and widened inside the matrix kernel: a short text's forward pass
  // is bound by streaming them, and fp16 halves that (all-MiniLM-L6-v2: cosine to fp32 >= 0.9999995 on the parity
  // texts). False keeps fp32, as fine-tuning does, so that its trainable copy reproduces encode() exactly.
  bool half_weights = true;
};

class BertEncoder : public Encoder {
 public:
  explicit BertEncoder(const std::string& model_dir, BertEncoderOptions options = {});
  ~BertEncoder() override;

  RowMatrix encode(const std::vector<std::string>& texts) const override;
  int dim() const override { return hidden_size_ * static_cast<int>(pooling_.size()); }
  std::string name() const override { return options_.spec.empty() ? "bert:" + model_dir_ : options_.spec; }

  // Pooled (and, per options, normalized) embeddings of already tokenized sequences, [CLS] ... [SEP] included.
  RowMatrix encode_ids(const std::vector<std::vector<int32_t>>& sequences) const;
  const WordPieceTokenizer& tokenizer() const { return tokenizer_; }
  const std::string& model_dir() const { return model_dir_; }
  const BertEncoderOptions& options() const { return options_; }
  // Whether the dense weights are fp16 here: options().half_weights on a CPU whose matrix kernel reads fp16 (AVX2
  // with F16C, or AVX-512); the portable kernel keeps fp32.
  bool uses_half_weights() const;
  int max_length() const { return tokenizer_.options().max_length; }
  int layers() const;

  // Fine-tuning (bert_top.hpp), for models that pool by the mean alone and use the exact GELU (relmem::Error
  // otherwise): a trainable copy of the top `layers` layers, and the token states entering them (the embeddings
  // and the layers below run here, on texts cut as encode() cuts them).
  BertTop top(int layers) const;
  TokenStates token_states(const std::vector<std::string>& texts, int top_layers) const;
  // Writes a copy of this model's directory whose top layers have `top`'s weights (every tensor as F32), loadable
  // as bert:DIR or minilm:DIR. relmem::Error when `out_dir` already exists.
  void save_with_top(const BertTop& top, const std::string& out_dir) const;

 private:
  enum class Pooling { kCls, kMax, kMean, kMeanSqrtLength };  // concatenated in this order, as sentence-transformers

  std::vector<Pooling> read_pooling(const std::string& file) const;
  // Embeds sequences[order[begin..end)] into their rows of out.
  void embed_batch(const std::vector<std::vector<int32_t>>& sequences, const std::vector<std::size_t>& order,
                   std::size_t begin, std::size_t end, RowMatrix& out) const;

  void check_fine_tunable(int top_layers) const;

  std::string model_dir_;
  std::string transformer_dir_;  // where config.json, vocab.txt and model.safetensors are
  BertEncoderOptions options_;
  WordPieceTokenizer tokenizer_;
  std::unique_ptr<const BertModel> model_;
  int hidden_size_ = 0;
  std::vector<Pooling> pooling_{Pooling::kMean};  // without a pooling config, as sentence-transformers
};

}  // namespace relmem
