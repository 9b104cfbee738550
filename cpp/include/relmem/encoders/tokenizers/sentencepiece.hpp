#pragma once
// SentencePiece unigram tokenizer, exactly as the TensorFlow.js Universal Sentence Encoder tokenizer implements it
// (@energetic-ai/embeddings 0.2.0, from tfjs-models): NFKC, "▁" for the start and for every space, Viterbi
// segmentation over the vocabulary's log-probability scores with unknown characters as id 0 at score 0, and runs of
// unknowns merged. Its quirks are reproduced on purpose, because the model was trained on them: ties go to the later
// piece, a position no piece reaches counts as score 0, and a null score in vocab.json counts as 0.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace relmem {

class SentencePieceTokenizer {
 public:
  struct Piece {
    std::string text;  // UTF-8
    double score = 0.0;
  };

  // The first `reserved` pieces (unknown, control and extra tokens) are never produced, except unknown (id 0).
  explicit SentencePieceTokenizer(std::vector<Piece> vocabulary, int reserved = 6);
  // vocab.json: a JSON list of [piece, score] pairs. relmem::Error naming the file when missing or malformed.
  static SentencePieceTokenizer from_vocab_json(const std::string& path);

  std::vector<int32_t> encode(const std::string& text) const;
  std::size_t vocabulary_size() const { return vocabulary_.size(); }
  const Piece& piece(int32_t id) const { return vocabulary_.at(static_cast<std::size_t>(id)); }

 private:
  struct TrieNode {
    bool is_piece = false;
    int32_t id = 0;
    double score = 0.0;
  };
  int32_t child(int32_t node, char32_t code_point) const;

  std::vector<Piece> vocabulary_;
  std::vector<int32_t> backtrack_length_;  // the piece's length in UTF-16 units, as the reference steps back
  std::vector<TrieNode> nodes_;            // node 0 is the root
  std::unordered_map<uint64_t, int32_t> children_;
};

}  // namespace relmem
