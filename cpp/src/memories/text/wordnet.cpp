#include "relmem/memories/text/wordnet.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>

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

// Calls `line` with each line of the text but the license header's (which start with a space) and empty ones.
template <typename F>
void for_each_line(const std::string& text, F&& line) {
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start && text[start] != ' ') line(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
}

// The fields of a line, separated by white space, in order; "" once none is left.
class Fields {
 public:
  explicit Fields(std::string_view line) : line_(line) {}
  std::string_view next() {
    while (at_ < line_.size() && is_space(line_[at_])) ++at_;
    const size_t start = at_;
    while (at_ < line_.size() && !is_space(line_[at_])) ++at_;
    return line_.substr(start, at_ - start);
  }
  // The next field as a number in `base`; false (and `value` unchanged) when it is absent or not one.
  template <typename T>
  bool next_number(T& value, int base = 10) {
    const std::string_view field = next();
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value, base);
    return !field.empty() && error == std::errc() && end == field.data() + field.size();
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
  std::string_view line_;
  size_t at_ = 0;
};

std::string lemma_key(const std::string& word) {
  std::string out;
  for (char c : word) out += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A pointer's part of speech: n, v, a or s (adjective satellite), r; -1 for anything else.
int part_of(char pos) {
  switch (pos) {
    case 'n':
      return 0;
    case 'v':
      return 1;
    case 'a':
    case 's':
      return 2;
    case 'r':
      return 3;
  }
  return -1;
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

// data.<part>: "offset lex_filenum ss_type w_cnt word lex_id [word lex_id]... p_cnt [symbol offset pos
// source/target]... | gloss", w_cnt in hexadecimal; offset is the line's byte offset in the file.
// index.<part>: "lemma pos synset_cnt p_cnt [symbol]... sense_cnt tagsense_cnt synset_offset...", most frequent
// sense first. <part>.exc: "inflected base...". The license header's lines start with a space.
WordNet::WordNet(const std::string& folder) {
  struct Pointer {
    uint32_t synset;
    int part;
    size_t offset;
    char symbol;  // '@', '&', '!', '\\' or '='
  };
  std::vector<Pointer> pointers;
  std::array<std::unordered_map<size_t, uint32_t>, kParts> by_offset;
  for (int part = 0; part < kParts; ++part) {
    for_each_line(read_file(folder + "/data." + kPartNames[part]), [&](std::string_view line) {
      Fields fields(line);
      size_t offset = 0;
      unsigned long words = 0;
      const std::string_view offset_field = fields.next();
      const bool lex_file = !fields.next().empty(), type = !fields.next().empty();
      if (!fields.next_number(words, 16) || offset_field.empty() || !lex_file || !type) return;
      std::from_chars(offset_field.data(), offset_field.data() + offset_field.size(), offset);
      const auto id = static_cast<uint32_t>(synsets_.size());
      by_offset[part][offset] = id;
      Synset synset;
      for (unsigned long i = 0; i < words; ++i) {
        const std::string_view word = fields.next();
        if (word.empty() || fields.next().empty()) break;  // the word, then its lex_id
        std::string text(word.substr(0, word.find('(')));
        std::replace(text.begin(), text.end(), '_', ' ');
        synset.words.push_back(std::move(text));
      }
      int pointer_count = 0;
      fields.next_number(pointer_count);
      for (int i = 0; i < pointer_count; ++i) {
        const std::string_view symbol = fields.next(), target = fields.next(), pos = fields.next();
        if (fields.next().empty()) break;  // source/target, the last of the four
        size_t target_offset = 0;
        std::from_chars(target.data(), target.data() + target.size(), target_offset);
        if (symbol == "@" || symbol == "&" || symbol == "!" || ((symbol == "\\" || symbol == "=") && part == 2))
          pointers.push_back(Pointer{id, part_of(pos[0]), target_offset, symbol[0]});
      }
      synsets_.push_back(std::move(synset));
    });
    const std::string index_path = folder + "/index." + kPartNames[part];
    for_each_line(read_file(index_path), [&](std::string_view line) {
      Fields fields(line);
      const std::string_view lemma = fields.next();
      size_t synsets = 0, pointer_symbols = 0;
      if (fields.next().empty() || !fields.next_number(synsets) || !fields.next_number(pointer_symbols))
        throw Error("malformed line in " + index_path);
      for (size_t i = 0; i < pointer_symbols + 2; ++i) fields.next();  // pointer symbols, sense_cnt, tagsense_cnt
      std::vector<uint32_t> senses;
      size_t offset = 0, listed = 0;
      for (; listed < synsets && fields.next_number(offset); ++listed) {
        auto found = by_offset[part].find(offset);
        if (found != by_offset[part].end()) senses.push_back(found->second);
      }
      if (listed != synsets) throw Error("malformed line in " + index_path + ": " + std::string(lemma));
      index_[part].emplace(std::string(lemma), std::move(senses));
    });
    const std::string exceptions_path = folder + "/" + kPartNames[part] + ".exc";
    if (!std::filesystem::exists(exceptions_path)) continue;
    for_each_line(read_file(exceptions_path), [&](std::string_view line) {
      Fields fields(line);
      Exception exception;
      exception.inflected = std::string(fields.next());
      for (std::string_view base = fields.next(); !base.empty(); base = fields.next())
        exception.bases.emplace_back(base);
      if (exception.bases.empty()) return;
      exception_of_[part].emplace(exception.inflected, exceptions_[part].size());
      exceptions_[part].push_back(std::move(exception));
    });
  }
  for (const auto& pointer : pointers) {
    if (pointer.part < 0) continue;
    auto found = by_offset[pointer.part].find(pointer.offset);
    if (found == by_offset[pointer.part].end()) continue;
    Synset& synset = synsets_[pointer.synset];
    if (pointer.symbol == '!')
      synset.antonyms.push_back(found->second);
    else if (pointer.symbol == '\\')
      synset.pertains_to.push_back(found->second);
    else if (pointer.symbol == '=')
      synset.attributes.push_back(found->second);
    else
      synset.broader.push_back(Link{found->second, pointer.symbol == '@'});
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
    auto found = exception_of_[part].find(key);
    if (found != exception_of_[part].end()) return exceptions_[part][found->second].bases.front();
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
    const auto& ids = found->second;
    for (size_t sense = 0; sense < ids.size() && sense < static_cast<size_t>(std::max(senses, 0)); ++sense) {
      for (const std::string& lemma : synsets_[ids[sense]].words) {
        if (lemma_key(lemma) == key) continue;
        std::string text;
        for (char c : lemma) text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
      }
    }
  }
  return out;
}

std::vector<std::string> WordNet::attributes(const std::string& word, int senses) const {
  constexpr int kAdjectives = 2;
  std::vector<std::string> out;
  // The adjective's own base form: "longest" is also an adverb, which base_form() would keep.
  const std::string key = lemma_key(word);
  auto found = index_[kAdjectives].find(key);
  if (found == index_[kAdjectives].end()) {
    auto exception = exception_of_[kAdjectives].find(key);
    if (exception != exception_of_[kAdjectives].end())
      found = index_[kAdjectives].find(exceptions_[kAdjectives][exception->second].bases.front());
    for (const auto& [inflection, replacement] : kSuffixes[kAdjectives]) {
      if (found != index_[kAdjectives].end()) break;
      if (ends_with(key, inflection))
        found = index_[kAdjectives].find(key.substr(0, key.size() - inflection.size()) + replacement);
    }
  }
  if (found == index_[kAdjectives].end()) return out;
  const auto& ids = found->second;
  for (size_t sense = 0; sense < ids.size() && sense < static_cast<size_t>(std::max(senses, 0)); ++sense) {
    for (uint32_t attribute : synsets_[ids[sense]].attributes) {
      for (const std::string& lemma : synsets_[attribute].words) {
        std::string text;
        for (char c : lemma) text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
      }
    }
  }
  return out;
}

}  // namespace relmem
