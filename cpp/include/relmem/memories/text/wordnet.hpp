#pragma once
// Princeton WordNet 3.0 read from its database files (Debian's wordnet-base: /usr/share/wordnet): the dictionary
// form of an inflected word ("vocalists" -> "vocalist", WordNet's morphy) and the other words of a word's most
// frequent senses ("singer" -> "vocalist", "vocalizer", "vocaliser"). The selection memory expands schema words with
// them, so a question that names a table or column by a synonym still matches it.
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace relmem {

class WordNet {
 public:
  // $RELMEM_WORDNET_DIR when set, else /usr/share/wordnet.
  static std::string default_folder();
  // Whether `folder` holds the index and data files of all four parts of speech.
  static bool available(const std::string& folder = default_folder());
  // The default folder's WordNet, loaded once; null when it is not installed.
  static const WordNet* shared();

  // relmem::Error naming the file when one is missing or malformed.
  explicit WordNet(const std::string& folder = default_folder());

  // Whether WordNet lists the word (lower case, spaces or underscores between the words of a phrase).
  bool contains(const std::string& word) const;
  // The word's dictionary form: itself when listed, else its irregular base ("children" -> "child") or the first
  // listed form after removing an inflection ("countries" -> "country"); "" when none is listed.
  std::string base_form(const std::string& word) const;
  // The other words of the word's `senses` most frequent senses in each part of speech (of its base form), most
  // frequent sense first, each once, lower case, phrases with spaces. With `nouns`, only its noun senses when it
  // has some (schema names are nouns: "pet" the animal, not the adjective "favourite").
  std::vector<std::string> synonyms(const std::string& word, int senses = 1, bool nouns = false) const;

 private:
  static constexpr int kParts = 4;  // noun, verb, adjective, adverb
  std::array<std::unordered_map<std::string, std::vector<size_t>>, kParts> index_;  // lemma -> synset offsets
  std::array<std::string, kParts> data_;                                            // data.<part>, whole
  std::array<std::unordered_map<std::string, std::string>, kParts> exceptions_;     // inflected -> base
};

}  // namespace relmem
