#include "relmem/memories/text/wordnet.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "relmem/common.hpp"

namespace relmem {
namespace {

const char* const kPartNames[] = {"noun", "verb", "adj", "adv"};

// Morphy's suffix rules per part of speech: (inflection, replacement).
const std::vector<std::pair<std::string, std::string>> kSuffixes[] = {
    {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"},
     {"ies", "y"}},
    {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
    {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
    {},
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open WordNet file " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string lemma_key(const std::string& word) {
  std::string out;
  for (char c : word) out += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string WordNet::default_folder() {
  const char* env = std::getenv("RELMEM_WORDNET_DIR");
  return env && *env ? env : "/usr/share/wordnet";
}

bool WordNet::available(const std::string& folder) {
  for (const char* part : kPartNames) {
    if (!std::filesystem::exists(folder + "/index." + std::string(part)) ||
        !std::filesystem::exists(folder + "/data." + std::string(part))) {
      return false;
    }
  }
  return true;
}

const WordNet* WordNet::shared() {
  static std::once_flag once;
  static std::unique_ptr<WordNet> wordnet;
  std::call_once(once, [] {
    if (available()) wordnet = std::make_unique<WordNet>();
  });
  return wordnet.get();
}

WordNet::WordNet(const std::string& folder) {
  for (int part = 0; part < kParts; ++part) {
    const std::string index_path = folder + "/index." + kPartNames[part];
    std::istringstream index(read_file(index_path));
    std::string line;
    while (std::getline(index, line)) {
      if (line.empty() || line[0] == ' ') continue;  // the license header
      std::istringstream fields(line);
      std::string lemma, pos;
      size_t synsets = 0, pointers = 0;
      if (!(fields >> lemma >> pos >> synsets >> pointers)) throw Error("malformed line in " + index_path);
      std::string skip;
      for (size_t i = 0; i < pointers + 2; ++i) fields >> skip;  // pointer symbols, sense_cnt, tagsense_cnt
      std::vector<size_t> offsets;
      size_t offset = 0;
      while (offsets.size() < synsets && fields >> offset) offsets.push_back(offset);
      if (offsets.size() != synsets) throw Error("malformed line in " + index_path + ": " + lemma);
      index_[part].emplace(std::move(lemma), std::move(offsets));
    }
    data_[part] = read_file(folder + "/data." + kPartNames[part]);
    const std::string exceptions_path = folder + "/" + kPartNames[part] + ".exc";
    if (!std::filesystem::exists(exceptions_path)) continue;
    std::istringstream exceptions(read_file(exceptions_path));
    while (std::getline(exceptions, line)) {
      std::istringstream fields(line);
      std::string inflected, base;
      if (fields >> inflected >> base) exceptions_[part].emplace(std::move(inflected), std::move(base));
    }
  }
}

bool WordNet::contains(const std::string& word) const {
  const std::string key = lemma_key(word);
  return std::any_of(index_.begin(), index_.end(), [&](const auto& index) { return index.count(key) > 0; });
}

std::string WordNet::base_form(const std::string& word) const {
  const std::string key = lemma_key(word);
  if (key.empty()) return "";
  if (contains(key)) return key;
  for (int part = 0; part < kParts; ++part) {
    auto found = exceptions_[part].find(key);
    if (found != exceptions_[part].end()) return found->second;
  }
  for (int part = 0; part < kParts; ++part) {
    for (const auto& [inflection, replacement] : kSuffixes[part]) {
      if (!ends_with(key, inflection)) continue;
      const std::string base = key.substr(0, key.size() - inflection.size()) + replacement;
      if (index_[part].count(base)) return base;
    }
  }
  return "";
}

std::vector<std::string> WordNet::synonyms(const std::string& word, int senses, bool nouns) const {
  const std::string key = base_form(word);
  std::vector<std::string> out;
  if (key.empty()) return out;
  const int parts = nouns && index_[0].count(key) ? 1 : kParts;  // part 0: nouns
  for (int part = 0; part < parts; ++part) {
    auto found = index_[part].find(key);
    if (found == index_[part].end()) continue;
    const auto& offsets = found->second;
    for (size_t sense = 0; sense < offsets.size() && sense < static_cast<size_t>(std::max(senses, 0)); ++sense) {
      const std::string& data = data_[part];
      if (offsets[sense] >= data.size()) continue;
      // "offset lex_filenum ss_type w_cnt(hex) word lex_id word lex_id ..."
      std::istringstream fields(data.substr(offsets[sense], data.find('\n', offsets[sense]) - offsets[sense]));
      std::string offset, file, type, count_hex;
      if (!(fields >> offset >> file >> type >> count_hex)) continue;
      const auto words = std::strtoul(count_hex.c_str(), nullptr, 16);
      for (unsigned long w = 0; w < words; ++w) {
        std::string lemma, lex_id;
        if (!(fields >> lemma >> lex_id)) break;
        lemma = lemma.substr(0, lemma.find('('));  // adjective markers such as "(a)"
        if (lemma_key(lemma) == key) continue;
        std::string text;
        for (char c : lemma) text += c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
      }
    }
  }
  return out;
}

}  // namespace relmem
