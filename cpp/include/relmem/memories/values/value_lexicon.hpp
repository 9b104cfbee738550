#pragma once
// What values mean, independent of any database: the forms one concept is written in ("France", "FR", "FRA",
// "French"; "AK", "Alaska"; "F", "female", "women") and WordNet's synonym sets ("film", "movie"). The value memory
// matches a written value to a stored one through a shared concept (see value_channels.hpp).
//
// Sources, read once per process from their installed paths:
//  - Debian `iso-codes` (ISO 3166-1 names, alpha-2, alpha-3): $RELMEM_ISO_CODES or /usr/share/iso-codes/json;
//  - Debian `wordnet-base` (WordNet 3.0), through relmem::WordNet: $RELMEM_WORDNET_DIR or /usr/share/wordnet;
//  - what no package holds, shipped as small TSV files with their sources in data/values/ (IOC codes, demonyms, US
//    states, gender and boolean codes, months, units): $RELMEM_VALUE_DATA or the source tree's data/values.
// A source that is absent is listed in missing_sources() and its channels match nothing; nothing fails.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace relmem {

// The kinds of meaning a match can go through; the names are what lookup results and traces show.
enum class Channel : uint8_t { Country, UsState, Gender, Boolean, Month, Unit, Count };
std::string channel_name(Channel channel);

struct LexiconSources {
  std::string iso_codes_dir;
  std::string wordnet_dir;
  std::string data_dir;
  static LexiconSources from_environment();
};

class ValueLexicon {
 public:
  static ValueLexicon load(const LexiconSources& sources);
  // Loaded on first use from LexiconSources::from_environment(); thread-safe.
  static const ValueLexicon& shared();

  // The key a form is looked up by: normalize_value without spaces ("U.S.A." -> "usa").
  static std::string key_of(const std::string& text);

  struct Concept {
    Channel channel;
    std::string name;               // "FRA", "AK", "female", ...
    std::vector<std::string> keys;  // key_of each form
  };
  // Concepts a form belongs to, in any channel; empty when none.
  std::vector<uint32_t> concepts_of(const std::string& key) const;
  const Concept& concept_at(uint32_t id) const { return concepts_[id]; }
  size_t concepts() const { return concepts_.size(); }

  // WordNet: words that mean the same as `key` (or as its base form: "verified" -> "verify", WordNet's exception
  // lists and suffix rules), itself excluded, each with the fewest links that join them: 0 when they share a
  // synset ("film" / "movie"); 1 when one is the other's hypernym or a similar adjective ("head" / "leader",
  // "normal" / "regular"); 2 when one is a kind of a kind of the other ("kitty" / "cat", "meal" / "food"), never
  // through a shared hypernym (siblings such as "Republican" / "Democrat" are different things).
  struct Synonym {
    std::string key;
    int links = 0;
  };
  std::vector<Synonym> synonyms_of(const std::string& key) const;
  std::vector<std::string> base_forms(const std::string& key) const;
  // Whether the two name contrasting things although WordNet relates them: no sense of one is a sense of the other,
  // and some senses are antonyms ("win" / "loss") or siblings, kinds of one broader thing ("Republican" /
  // "Democratic": an adjective's sense is also read as the noun it pertains to, here two political parties).
  bool contrasts(const std::string& a, const std::string& b) const;
  // Whether `key` is a word or name in its own right: a WordNet lemma, an irregular form WordNet lists ("feet"),
  // or a concept's form ("iceland", "robin"; not "frnace", nor "enginer" though "engine" + "-er" could be).
  bool knows(const std::string& key) const;
  size_t synsets() const { return synset_lemmas_.size(); }

  const std::vector<std::string>& missing_sources() const { return missing_; }

 private:
  uint32_t add_concept(Channel channel, const std::string& name);
  void add_form(uint32_t concept_id, const std::string& form);
  void read_iso_countries(const std::string& dir);
  void read_wordnet(const std::string& dir);
  void read_data_files(const std::string& dir);

  std::vector<Concept> concepts_;
  std::unordered_map<std::string, uint32_t> concept_by_name_;  // channel name + ":" + concept name -> id
  std::unordered_map<std::string, std::vector<uint32_t>> by_key_;
  std::vector<std::vector<std::string>> synset_lemmas_;
  std::vector<std::vector<uint32_t>> synset_related_;  // hypernyms, hyponyms (nouns, verbs), similar adjectives
  std::vector<std::vector<uint32_t>> synset_hypernyms_, synset_hyponyms_;
  std::vector<std::vector<uint32_t>> synset_antonyms_, synset_pertains_to_;
  std::unordered_map<std::string, std::vector<std::string>> exceptions_;  // inflected form -> base forms
  std::unordered_map<std::string, std::vector<uint32_t>> synsets_by_key_;
  std::vector<std::string> missing_;
};

}  // namespace relmem
