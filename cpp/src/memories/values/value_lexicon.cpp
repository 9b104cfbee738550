#include "relmem/memories/values/value_lexicon.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "../../common/json_file.hpp"
#include "relmem/common.hpp"
#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/memories/text/wordnet.hpp"

#ifndef RELMEM_VALUE_DATA_DIR
#define RELMEM_VALUE_DATA_DIR "data/values"
#endif

namespace relmem {
namespace {

std::string environment_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t'))
    if (!field.empty()) out.push_back(field);
  return out;
}

// Non-empty, non-comment lines of a TSV file, split at tabs.
std::vector<std::vector<std::string>> read_tsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto fields = split_tabs(line);
    if (fields.size() >= 2) rows.push_back(std::move(fields));
  }
  return rows;
}

Channel channel_from_name(const std::string& name, const std::string& path) {
  for (uint8_t c = 0; c < static_cast<uint8_t>(Channel::Count); ++c)
    if (channel_name(static_cast<Channel>(c)) == name) return static_cast<Channel>(c);
  throw Error("unknown channel '" + name + "' in " + path);
}

}  // namespace

std::string channel_name(Channel channel) {
  switch (channel) {
    case Channel::Country:
      return "country";
    case Channel::UsState:
      return "us_state";
    case Channel::Gender:
      return "gender";
    case Channel::Boolean:
      return "boolean";
    case Channel::Month:
      return "month";
    case Channel::Unit:
      return "unit";
    case Channel::Count:
      break;
  }
  return "unknown";
}

LexiconSources LexiconSources::from_environment() {
  return {environment_or("RELMEM_ISO_CODES", "/usr/share/iso-codes/json"),
          WordNet::default_folder(),
          environment_or("RELMEM_VALUE_DATA", RELMEM_VALUE_DATA_DIR)};
}

std::string ValueLexicon::key_of(const std::string& text) { return compact_value(normalize_value(text)); }

const ValueLexicon& ValueLexicon::shared() {
  static const ValueLexicon lexicon = load(LexiconSources::from_environment());
  return lexicon;
}

ValueLexicon ValueLexicon::load(const LexiconSources& sources) {
  ValueLexicon lexicon;
  lexicon.read_data_files(sources.data_dir);  // first: concept names ("FRA") the ISO list then adds forms to
  lexicon.read_iso_countries(sources.iso_codes_dir);
  lexicon.read_wordnet(sources.wordnet_dir);
  for (auto& [_, ids] : lexicon.by_key_) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return lexicon;
}

uint32_t ValueLexicon::add_concept(Channel channel, const std::string& name) {
  const std::string full = channel_name(channel) + ":" + name;
  auto [it, inserted] = concept_by_name_.emplace(full, static_cast<uint32_t>(concepts_.size()));
  if (inserted) concepts_.push_back(Concept{channel, name, {}});
  return it->second;
}

void ValueLexicon::add_form(uint32_t concept_id, const std::string& form) {
  const std::string key = key_of(form);
  if (key.empty()) return;
  auto& keys = concepts_[concept_id].keys;
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  keys.push_back(key);
  by_key_[key].push_back(concept_id);
}

void ValueLexicon::read_data_files(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    missing_.push_back("value data files (" + dir + "): no IOC codes, demonyms, US states, codes, months, units");
    return;
  }
  const auto file = [&](const char* name) { return (fs::path(dir) / name).string(); };
  for (const auto& row : read_tsv(file("demonyms.tsv"))) {
    const bool iso = row[0][0] != '-';
    const uint32_t id = add_concept(Channel::Country, iso ? row[0] : row[0].substr(1));
    for (size_t i = 1; i < row.size(); ++i) add_form(id, row[i]);
  }
  for (const auto& row : read_tsv(file("ioc_codes.tsv"))) add_form(add_concept(Channel::Country, row[0]), row[1]);
  for (const auto& row : read_tsv(file("us_states.tsv"))) {
    const uint32_t id = add_concept(Channel::UsState, row[0]);
    for (const auto& form : row) add_form(id, form);
  }
  const std::string codes = file("codes.tsv");
  for (const auto& row : read_tsv(codes)) {
    if (row.size() < 3) throw Error("expected channel, concept and forms in " + codes);
    const uint32_t id = add_concept(channel_from_name(row[0], codes), row[1]);
    for (size_t i = 2; i < row.size(); ++i) add_form(id, row[i]);
  }
  for (const auto& row : read_tsv(file("months.tsv"))) {
    const uint32_t id = add_concept(Channel::Month, row[0]);
    for (size_t i = 1; i < row.size(); ++i) add_form(id, row[i]);  // not the number: "1" is also a truth value
  }
  for (const auto& row : read_tsv(file("units.tsv"))) {
    const uint32_t id = add_concept(Channel::Unit, row[0]);
    for (const auto& form : row) add_form(id, form);
  }
}

void ValueLexicon::read_iso_countries(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "iso_3166-1.json").string();
  if (!std::filesystem::exists(path)) {
    missing_.push_back("Debian iso-codes (" + path + "): no ISO 3166-1 country names and codes");
    return;
  }
  const nlohmann::json json = read_json_file(path);
  if (!json.contains("3166-1") || !json["3166-1"].is_array()) throw Error("no \"3166-1\" list in " + path);
  for (const auto& country : json["3166-1"]) {
    const std::string alpha_3 = country.value("alpha_3", "");
    if (alpha_3.empty()) continue;
    const uint32_t id = add_concept(Channel::Country, alpha_3);
    for (const char* field : {"name", "official_name", "common_name", "alpha_2", "alpha_3"}) {
      const std::string form = country.value(field, "");
      if (form.empty()) continue;
      add_form(id, form);
      const size_t comma = form.find(", ");  // "Korea, Republic of": also "Republic of Korea"
      if (comma != std::string::npos) add_form(id, form.substr(comma + 2) + " " + form.substr(0, comma));
    }
  }
}

// WordNet's synsets keyed as values are ("movie", "head of state" -> "headofstate"), each related to its broader
// synsets and they to it (hyponyms too: "kitty" for "cat" either way), hypernym links also kept apart; its
// exception lists keyed likewise.
void ValueLexicon::read_wordnet(const std::string& dir) {
  if (!WordNet::available(dir)) {
    missing_.push_back("Debian wordnet-base (" + dir + "): no WordNet synonyms");
    return;
  }
  // The copy the selection memory reads serves when it is of the same folder.
  const WordNet* shared = dir == WordNet::default_folder() ? WordNet::shared() : nullptr;
  std::unique_ptr<WordNet> own = shared ? nullptr : std::make_unique<WordNet>(dir);
  const WordNet& wordnet = shared ? *shared : *own;
  const auto& synsets = wordnet.synsets();
  synset_lemmas_.resize(synsets.size());
  synset_related_.resize(synsets.size());
  synset_hypernyms_.resize(synsets.size());
  synset_hyponyms_.resize(synsets.size());
  synset_antonyms_.resize(synsets.size());
  synset_pertains_to_.resize(synsets.size());
  for (uint32_t id = 0; id < synsets.size(); ++id) {
    synset_antonyms_[id] = synsets[id].antonyms;
    synset_pertains_to_[id] = synsets[id].pertains_to;
    auto& lemmas = synset_lemmas_[id];
    for (const auto& word : synsets[id].words) {
      const std::string key = key_of(word);
      if (!key.empty() && std::find(lemmas.begin(), lemmas.end(), key) == lemmas.end()) lemmas.push_back(key);
    }
    for (const auto& key : lemmas) synsets_by_key_[key].push_back(id);
    for (const auto& link : synsets[id].broader) {
      synset_related_[id].push_back(link.synset);
      synset_related_[link.synset].push_back(id);
      if (!link.hypernym) continue;
      synset_hypernyms_[id].push_back(link.synset);
      synset_hyponyms_[link.synset].push_back(id);
    }
  }
  for (int part = 0; part < WordNet::kParts; ++part)
    for (const auto& exception : wordnet.exceptions(part))
      for (const auto& base : exception.bases) exceptions_[key_of(exception.inflected)].push_back(key_of(base));
}

std::vector<std::string> ValueLexicon::base_forms(const std::string& key) const {
  std::vector<std::string> out;
  const auto add = [&](const std::string& base) {
    if (!base.empty() && synsets_by_key_.count(base) && std::find(out.begin(), out.end(), base) == out.end())
      out.push_back(base);
  };
  add(key);
  auto it = exceptions_.find(key);
  if (it != exceptions_.end())
    for (const auto& base : it->second) add(base);
  static const std::pair<const char*, const char*> kSuffixes[] = {
      {"s", ""},  {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"},
      {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"},   {"ed", ""},     {"ied", "y"},   {"ing", "e"},
      {"ing", ""},  {"er", ""},  {"est", ""}, {"er", "e"},  {"est", "e"}};
  // A lemma itself keeps its own meaning ("accounting" is not "account"), except a past participle, which WordNet
  // lists as an adjective of its verb's meaning ("finished" / "finish", "verified" / "verify").
  const bool lemma = !out.empty() && out[0] == key;
  for (const auto& [suffix, replacement] : kSuffixes) {
    const size_t n = std::strlen(suffix);
    if (lemma && std::strcmp(suffix, "ed") != 0 && std::strcmp(suffix, "ied") != 0) continue;
    if (key.size() > n + 2 && key.compare(key.size() - n, n, suffix) == 0)
      add(key.substr(0, key.size() - n) + replacement);
  }
  return out;
}

bool ValueLexicon::contrasts(const std::string& a, const std::string& b) const {
  // The senses of a word, and the nouns its adjective senses pertain to.
  const auto senses = [&](const std::string& key) {
    std::vector<uint32_t> out;
    for (const auto& base : base_forms(key))
      for (uint32_t synset : synsets_by_key_.at(base)) {
        out.push_back(synset);
        out.insert(out.end(), synset_pertains_to_[synset].begin(), synset_pertains_to_[synset].end());
      }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  const std::vector<uint32_t> left = senses(a), right = senses(b);
  const auto in_right = [&](uint32_t synset) { return std::binary_search(right.begin(), right.end(), synset); };
  if (left.empty() || right.empty() || std::any_of(left.begin(), left.end(), in_right)) return false;
  const auto in_left = [&](uint32_t synset) { return std::binary_search(left.begin(), left.end(), synset); };
  std::vector<uint32_t> right_parents;
  for (uint32_t synset : right) {
    if (std::any_of(synset_antonyms_[synset].begin(), synset_antonyms_[synset].end(), in_left)) return true;
    right_parents.insert(right_parents.end(), synset_hypernyms_[synset].begin(), synset_hypernyms_[synset].end());
  }
  std::sort(right_parents.begin(), right_parents.end());
  for (uint32_t synset : left) {
    if (std::any_of(synset_antonyms_[synset].begin(), synset_antonyms_[synset].end(), in_right)) return true;
    for (uint32_t parent : synset_hypernyms_[synset])
      if (std::binary_search(right_parents.begin(), right_parents.end(), parent)) return true;
  }
  return false;
}

bool ValueLexicon::knows(const std::string& key) const {
  return synsets_by_key_.count(key) > 0 || exceptions_.count(key) > 0 || by_key_.count(key) > 0;
}

std::vector<uint32_t> ValueLexicon::concepts_of(const std::string& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? std::vector<uint32_t>{} : it->second;
}

std::vector<ValueLexicon::Synonym> ValueLexicon::synonyms_of(const std::string& key) const {
  std::vector<Synonym> out;
  std::unordered_map<std::string, size_t> seen;
  const auto add = [&](uint32_t synset, int links) {
    for (const auto& lemma : synset_lemmas_[synset]) {
      if (lemma == key) continue;
      auto [it, inserted] = seen.emplace(lemma, out.size());
      if (inserted)
        out.push_back(Synonym{lemma, links});
      else
        out[it->second].links = std::min(out[it->second].links, links);
    }
  };
  for (const auto& base : base_forms(key)) {
    for (uint32_t synset : synsets_by_key_.at(base)) {
      add(synset, 0);
      for (uint32_t related : synset_related_[synset]) add(related, 1);
      for (const auto* chain : {&synset_hypernyms_, &synset_hyponyms_})
        for (uint32_t next : (*chain)[synset])
          for (uint32_t second : (*chain)[next]) add(second, 2);
    }
  }
  return out;
}

}  // namespace relmem
