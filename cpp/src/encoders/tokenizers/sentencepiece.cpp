#include "relmem/encoders/tokenizers/sentencepiece.hpp"

#include <algorithm>

#include "../../common/json_file.hpp"
#include "nfkc.hpp"
#include "relmem/common.hpp"
#include "unicode_text.hpp"

namespace relmem {
namespace {

constexpr char32_t kWordBoundary = 0x2581;  // "▁"
constexpr int32_t kUnknownId = 0;

uint64_t child_key(int32_t node, char32_t code_point) { return (static_cast<uint64_t>(node) << 21) | code_point; }

int32_t utf16_length(const std::u32string& text) {
  int32_t length = 0;
  for (char32_t cp : text) length += cp > 0xFFFF ? 2 : 1;
  return length;
}

// NFKC, then "▁" before the text and in place of every U+0020 (nothing for an empty text).
std::u32string normalize_for_pieces(const std::string& text) {
  std::u32string normalized = nfkc::normalize(unicode::decode_utf8(text));
  if (normalized.empty()) return normalized;
  std::u32string out;
  out.reserve(normalized.size() + 1);
  out.push_back(kWordBoundary);
  for (char32_t cp : normalized) out.push_back(cp == U' ' ? kWordBoundary : cp);
  return out;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(std::vector<Piece> vocabulary, int reserved)
    : vocabulary_(std::move(vocabulary)), nodes_(1) {
  if (vocabulary_.empty()) throw Error("SentencePiece vocabulary is empty");
  backtrack_length_.reserve(vocabulary_.size());
  for (std::size_t id = 0; id < vocabulary_.size(); ++id) {
    const std::u32string symbols = unicode::decode_utf8(vocabulary_[id].text);
    backtrack_length_.push_back(std::max<int32_t>(1, utf16_length(symbols)));  // 1 for an empty piece: no endless loop
    if (static_cast<int>(id) < reserved || symbols.empty()) continue;
    int32_t node = 0;
    for (char32_t cp : symbols) {
      auto [it, inserted] = children_.emplace(child_key(node, cp), static_cast<int32_t>(nodes_.size()));
      if (inserted) nodes_.emplace_back();
      node = it->second;
    }
    // A piece listed twice keeps its last id and score.
    nodes_[node] = TrieNode{true, static_cast<int32_t>(id), vocabulary_[id].score};
  }
}

SentencePieceTokenizer SentencePieceTokenizer::from_vocab_json(const std::string& path) {
  const nlohmann::json json = read_json_file(path);
  if (!json.is_array()) throw Error(path + " is not a SentencePiece vocabulary (expected a list of [piece, score])");
  std::vector<Piece> vocabulary;
  vocabulary.reserve(json.size());
  for (const auto& entry : json) {
    const bool valid =
        entry.is_array() && entry.size() == 2 && entry[0].is_string() && (entry[1].is_number() || entry[1].is_null());
    if (!valid) throw Error(path + ": malformed vocabulary entry " + entry.dump() + " (expected [piece, score])");
    // JavaScript adds a null score as 0, and the reference tokenizer does exactly that.
    vocabulary.push_back({entry[0].get<std::string>(), entry[1].is_null() ? 0.0 : entry[1].get<double>()});
  }
  return SentencePieceTokenizer(std::move(vocabulary));
}

int32_t SentencePieceTokenizer::child(int32_t node, char32_t code_point) const {
  auto it = children_.find(child_key(node, code_point));
  return it == children_.end() ? -1 : it->second;
}

std::vector<int32_t> SentencePieceTokenizer::encode(const std::string& text) const {
  const std::u32string symbols = normalize_for_pieces(text);
  const std::size_t n = symbols.size();

  // Every piece that matches at each start, grouped by end position, starts ascending within a group.
  struct Edge {
    int32_t start;
    int32_t id;
    double score;
  };
  std::vector<std::vector<Edge>> ending_at(n + 1);
  for (std::size_t start = 0; start < n; ++start) {
    bool matched = false;
    int32_t node = child(0, symbols[start]);
    for (std::size_t end = start + 1; node >= 0; ++end) {
      if (nodes_[node].is_piece) {
        ending_at[end].push_back({static_cast<int32_t>(start), nodes_[node].id, nodes_[node].score});
        matched = true;
      }
      if (end == n) break;
      node = child(node, symbols[end]);
    }
    if (!matched) ending_at[start + 1].push_back({static_cast<int32_t>(start), kUnknownId, 0.0});
  }

  // Viterbi, in the reference's order and with its comparison: a best score of exactly 0 counts as unset.
  std::vector<double> best(n + 1, 0.0);
  std::vector<int32_t> best_id(n + 1, kUnknownId);
  for (std::size_t end = 0; end <= n; ++end) {
    for (const Edge& edge : ending_at[end]) {
      const double score = edge.score + best[static_cast<std::size_t>(edge.start)];
      if (best[end] == 0.0 || score >= best[end]) {
        best[end] = score;
        best_id[end] = edge.id;
      }
    }
  }

  // Back from the end, each step as long as the chosen piece is in UTF-16 units; runs of unknowns become one.
  std::vector<int32_t> reversed;
  for (int64_t at = static_cast<int64_t>(n); at > 0; at -= backtrack_length_[static_cast<std::size_t>(best_id[at])]) {
    const int32_t id = best_id[static_cast<std::size_t>(at)];
    if (!(id == kUnknownId && !reversed.empty() && reversed.back() == kUnknownId)) reversed.push_back(id);
  }
  return std::vector<int32_t>(reversed.rbegin(), reversed.rend());
}

}  // namespace relmem
