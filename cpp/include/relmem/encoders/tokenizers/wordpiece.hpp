#pragma once
// BERT tokenization: Hugging Face BertTokenizer's basic tokenizer (text cleaning, CJK spacing, whitespace and
// punctuation split, lower-casing, accent stripping) followed by greedy longest-match-first WordPiece.
//
// Differences from the Python BertTokenizer, all on inputs sentence encoders rarely see: no NFC step (the Rust
// "fast" tokenizer has none either), and a capital sigma always lower-cases to σ (Python maps a word-final Σ to ς).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace relmem {

struct WordPieceOptions {
  bool lower_case = true;
  // Unset follows lower_case, as in Hugging Face (strip_accents: null).
  enum class StripAccents { kFollowLowerCase, kYes, kNo } strip_accents = StripAccents::kFollowLowerCase;
  bool tokenize_chinese_chars = true;
  int max_length = 512;  // including [CLS] and [SEP]
  int max_chars_per_word = 100;
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string mask_token = "[MASK]";
};

class WordPieceTokenizer {
 public:
  // vocab[i] is the token with id i.
  WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options);

  // Reads vocab.txt and the options in tokenizer_config.json (falling back to config.json for do_lower_case).
  static WordPieceTokenizer from_directory(const std::string& model_dir);
  static WordPieceOptions read_options(const std::string& model_dir);
  static std::vector<std::string> read_vocab(const std::string& path);

  // Word pieces without [CLS]/[SEP] and without truncation.
  std::vector<std::string> tokenize(const std::string& text) const;
  // [CLS] pieces [SEP] as ids, truncated to options().max_length.
  std::vector<int32_t> encode(const std::string& text) const;

  int32_t token_id(const std::string& token) const;  // throws relmem::Error for tokens outside the vocabulary
  const std::string& token(int32_t id) const;
  std::size_t vocab_size() const { return vocab_.size(); }
  const WordPieceOptions& options() const { return options_; }

 private:
  std::vector<std::u32string> basic_tokenize(const std::u32string& text) const;
  void append_word_pieces(const std::u32string& word, std::vector<int32_t>& ids) const;
  std::vector<int32_t> piece_ids(const std::string& text) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> ids_;
  WordPieceOptions options_;
  int32_t unk_id_, cls_id_, sep_id_;
  struct SpecialToken {
    std::u32string text;
    int32_t id;
  };
  std::vector<SpecialToken> special_tokens_;  // matched verbatim in the raw text, never split
};

}  // namespace relmem
