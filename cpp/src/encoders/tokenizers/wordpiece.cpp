#include "relmem/encoders/tokenizers/wordpiece.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "../../common/json_file.hpp"
#include "relmem/common.hpp"
#include "unicode_text.hpp"

namespace relmem {
namespace {

namespace fs = std::filesystem;
using unicode::CharClass;

bool is_whitespace(char32_t cp) {
  return cp == U' ' || cp == U'\t' || cp == U'\n' || cp == U'\r' ||
         unicode::char_class(cp) == CharClass::kWhitespace;
}

bool is_control(char32_t cp) { return !is_whitespace(cp) && unicode::char_class(cp) == CharClass::kControl; }

// Drops NUL, U+FFFD and control characters; every kind of whitespace becomes a plain space.
// With CJK spacing on, ideographs get spaces around them so that each becomes a word of its own.
std::u32string clean_text(const std::u32string& text, bool space_cjk) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t cp : text) {
    if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
    if (is_whitespace(cp)) {
      out.push_back(U' ');
    } else if (space_cjk && unicode::is_cjk_ideograph(cp)) {
      out += U' ';
      out.push_back(cp);
      out += U' ';
    } else {
      out.push_back(cp);
    }
  }
  return out;
}

// A config value that must be a bool when present.
bool bool_option(const nlohmann::json& config, const char* key, bool fallback, const std::string& file) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_boolean()) throw Error(file + ": '" + key + "' must be true or false");
  return config[key].get<bool>();
}

// Special tokens are written either as "[CLS]" or as {"content": "[CLS]", ...}.
std::string token_option(const nlohmann::json& config, const char* key, const std::string& fallback,
                         const std::string& file) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  const auto& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  throw Error(file + ": '" + key + "' must be a token string");
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  if (vocab_.empty()) throw Error("WordPiece vocabulary is empty");
  if (options_.max_length < 2) throw Error("WordPiece max_length must be at least 2 ([CLS] and [SEP])");
  if (options_.max_chars_per_word < 1) throw Error("WordPiece max_chars_per_word must be positive");
  ids_.reserve(vocab_.size());
  // A token listed twice keeps its last id, as in Hugging Face's load_vocab.
  for (std::size_t i = 0; i < vocab_.size(); ++i) ids_[vocab_[i]] = static_cast<int32_t>(i);
  unk_id_ = token_id(options_.unk_token);
  cls_id_ = token_id(options_.cls_token);
  sep_id_ = token_id(options_.sep_token);
  for (const std::string* special :
       {&options_.unk_token, &options_.cls_token, &options_.sep_token, &options_.pad_token, &options_.mask_token}) {
    auto it = ids_.find(*special);
    if (!special->empty() && it != ids_.end()) special_tokens_.push_back({unicode::decode_utf8(*special), it->second});
  }
  // Longest first, so that a special token that is a prefix of another never wins over it.
  std::sort(special_tokens_.begin(), special_tokens_.end(),
            [](const SpecialToken& a, const SpecialToken& b) { return a.text.size() > b.text.size(); });
}

std::vector<std::string> WordPieceTokenizer::read_vocab(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open WordPiece vocabulary " + path);
  std::vector<std::string> vocab;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    vocab.push_back(line);
  }
  if (vocab.empty()) throw Error("WordPiece vocabulary " + path + " is empty");
  return vocab;
}

WordPieceTokenizer WordPieceTokenizer::from_directory(const std::string& model_dir) {
  return WordPieceTokenizer(read_vocab((fs::path(model_dir) / "vocab.txt").string()), read_options(model_dir));
}

WordPieceOptions WordPieceTokenizer::read_options(const std::string& model_dir) {
  const fs::path dir(model_dir);
  WordPieceOptions options;
  const std::string config_file = (dir / "config.json").string();
  const std::string tokenizer_file = (dir / "tokenizer_config.json").string();
  if (auto config = read_json_file_if_present(config_file)) {
    options.lower_case = bool_option(*config, "do_lower_case", options.lower_case, config_file);
  }
  if (auto config = read_json_file_if_present(tokenizer_file)) {
    const auto& c = *config;
    const std::string& f = tokenizer_file;
    options.lower_case = bool_option(c, "do_lower_case", options.lower_case, f);
    if (c.contains("strip_accents") && !c["strip_accents"].is_null()) {
      options.strip_accents = bool_option(c, "strip_accents", false, f) ? WordPieceOptions::StripAccents::kYes
                                                                        : WordPieceOptions::StripAccents::kNo;
    }
    options.tokenize_chinese_chars = bool_option(c, "tokenize_chinese_chars", options.tokenize_chinese_chars, f);
    // Tokenizers without a real limit store a huge sentinel (1e30) here.
    if (c.contains("model_max_length") && c["model_max_length"].is_number()) {
      const double limit = c["model_max_length"].get<double>();
      if (limit >= 2 && limit <= 1e6) options.max_length = static_cast<int>(limit);
    }
    options.unk_token = token_option(c, "unk_token", options.unk_token, f);
    options.cls_token = token_option(c, "cls_token", options.cls_token, f);
    options.sep_token = token_option(c, "sep_token", options.sep_token, f);
    options.pad_token = token_option(c, "pad_token", options.pad_token, f);
    options.mask_token = token_option(c, "mask_token", options.mask_token, f);
  }
  return options;
}

int32_t WordPieceTokenizer::token_id(const std::string& token) const {
  auto it = ids_.find(token);
  if (it == ids_.end()) throw Error("token '" + token + "' is not in the WordPiece vocabulary");
  return it->second;
}

const std::string& WordPieceTokenizer::token(int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= vocab_.size()) {
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary");
  }
  return vocab_[id];
}

std::vector<std::u32string> WordPieceTokenizer::basic_tokenize(const std::u32string& text) const {
  const bool strip_accents = options_.strip_accents == WordPieceOptions::StripAccents::kFollowLowerCase
                                 ? options_.lower_case
                                 : options_.strip_accents == WordPieceOptions::StripAccents::kYes;
  const std::u32string cleaned = clean_text(text, options_.tokenize_chinese_chars);
  std::vector<std::u32string> words;
  std::u32string word;
  auto flush_word = [&] {
    if (word.empty()) return;
    std::u32string lowered;
    if (options_.lower_case) {
      for (char32_t cp : word) unicode::append_lower(cp, lowered);
    } else {
      lowered = word;
    }
    std::u32string normalized;
    if (strip_accents) {
      for (char32_t cp : lowered) unicode::append_without_accents(cp, normalized);
    } else {
      normalized = lowered;
    }
    std::u32string piece;
    for (char32_t cp : normalized) {
      if (unicode::is_punctuation(cp)) {
        if (!piece.empty()) words.push_back(std::move(piece));
        piece.clear();
        words.emplace_back(1, cp);
      } else {
        piece.push_back(cp);
      }
    }
    if (!piece.empty()) words.push_back(std::move(piece));
    word.clear();
  };
  for (char32_t cp : cleaned) {
    if (cp == U' ') {
      flush_word();
    } else {
      word.push_back(cp);
    }
  }
  flush_word();
  return words;
}

void WordPieceTokenizer::append_word_pieces(const std::u32string& word, std::vector<int32_t>& ids) const {
  if (word.size() > static_cast<std::size_t>(options_.max_chars_per_word)) {
    ids.push_back(unk_id_);
    return;
  }
  // Byte offset of every code point boundary, so candidate pieces are plain substrings of the UTF-8 word.
  std::string utf8;
  std::vector<std::size_t> offsets{0};
  for (char32_t cp : word) {
    unicode::append_utf8(cp, utf8);
    offsets.push_back(utf8.size());
  }
  const std::size_t first_piece = ids.size();
  std::size_t start = 0;
  std::string candidate;
  while (start < word.size()) {
    std::size_t end = word.size();
    int32_t found = -1;
    for (; end > start; --end) {
      candidate = start > 0 ? "##" : "";
      candidate.append(utf8, offsets[start], offsets[end] - offsets[start]);
      auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      // One unmatched remainder makes the whole word unknown.
      ids.resize(first_piece);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::piece_ids(const std::string& text) const {
  const std::u32string input = unicode::decode_utf8(text);
  std::vector<int32_t> ids;
  auto tokenize_segment = [&](std::size_t begin, std::size_t end) {
    for (const auto& word : basic_tokenize(input.substr(begin, end - begin))) append_word_pieces(word, ids);
  };
  // Special tokens written in the text ("[SEP]") keep their id, as Hugging Face's added-token split does.
  std::size_t segment_start = 0;
  for (std::size_t i = 0; i < input.size();) {
    const SpecialToken* match = nullptr;
    for (const auto& special : special_tokens_) {
      if (input.compare(i, special.text.size(), special.text) == 0) {
        match = &special;
        break;
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    tokenize_segment(segment_start, i);
    ids.push_back(match->id);
    i += match->text.size();
    segment_start = i;
  }
  tokenize_segment(segment_start, input.size());
  return ids;
}

std::vector<std::string> WordPieceTokenizer::tokenize(const std::string& text) const {
  std::vector<std::string> tokens;
  for (int32_t id : piece_ids(text)) tokens.push_back(vocab_[id]);
  return tokens;
}

std::vector<int32_t> WordPieceTokenizer::encode(const std::string& text) const {
  std::vector<int32_t> pieces = piece_ids(text);
  const std::size_t room = static_cast<std::size_t>(options_.max_length) - 2;
  if (pieces.size() > room) pieces.resize(room);
  std::vector<int32_t> ids;
  ids.reserve(pieces.size() + 2);
  ids.push_back(cls_id_);
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  ids.push_back(sep_id_);
  return ids;
}

}  // namespace relmem
