#pragma once
// Princeton WordNet 3.0 read from its database files (Debian's wordnet-base: /usr/share/wordnet), the one reader of
// them. Its users:
//  - the selection memory, through base_form(), synonyms() and attributes(): the dictionary form of an inflected
//    word ("vocalists" -> "vocalist", WordNet's morphy), the other words of a word's most frequent senses ("singer" ->
//    "vocalist", "vocalizer", "vocaliser") and what an adjective measures ("tallest" -> "height"), so that a question
//    naming a table or column by another word still matches;
//  - the value memory's meaning channels (ValueLexicon), through synsets() and exceptions(): every synset with its
//    words and its broader synsets, keyed there the way stored values are.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace relmem {

class WordNet {
 public:
  static constexpr int kParts = 4;  // noun, verb, adjective (satellites included), adverb: the files' order

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
  // The nouns naming what an adjective measures (its "=" attribute pointers): "tallest" -> "stature", "height";
  // "oldest" -> "age". Of the `senses` most frequent senses of the word's adjective base form, in file order, each
  // once, lower case, phrases with spaces; none for a word that is not an adjective.
  std::vector<std::string> attributes(const std::string& word, int senses = 1) const;

  // A line of data.<part>: its words as written (spaces between the words of a phrase, adjective markers such as
  // "(a)" removed), the synsets its "@" (hypernym) and "&" (similar adjective) pointers name, in file order, and its
  // antonyms and pertainyms.
  struct Link {
    uint32_t synset;  // an index into synsets()
    bool hypernym;    // "@"; else "&"
  };
  struct Synset {
    std::vector<std::string> words;
    std::vector<Link> broader;
    // "!" (antonym: "good" / "bad") and "\" (an adjective's pertainym: "republican" / the Republican Party), read
    // synset to synset: the value memory's test that two related words name contrasting things.
    std::vector<uint32_t> antonyms;
    std::vector<uint32_t> pertains_to;
    // "=" from an adjective to the noun of the attribute it is a value of ("tall" / "height").
    std::vector<uint32_t> attributes;
  };
  // Every synset, part by part in the files' order and within a part in file order.
  const std::vector<Synset>& synsets() const { return synsets_; }
  // A line of <part>.exc: an irregular inflection and its base forms ("geese" -> "goose"), underscores between words.
  struct Exception {
    std::string inflected;
    std::vector<std::string> bases;
  };
  const std::vector<Exception>& exceptions(int part) const { return exceptions_[part]; }

 private:
  std::vector<Synset> synsets_;
  std::array<std::unordered_map<std::string, std::vector<uint32_t>>, kParts> index_;  // lemma -> synsets, by sense
  std::array<std::vector<Exception>, kParts> exceptions_;
  std::array<std::unordered_map<std::string, size_t>, kParts> exception_of_;  // inflected -> its first line
};

}  // namespace relmem
