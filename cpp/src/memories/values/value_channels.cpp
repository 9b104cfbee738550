#include "relmem/memories/values/value_channels.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

constexpr size_t kChannels = static_cast<size_t>(Channel::Count);
constexpr uint32_t kProfiledValues = 50;  // the most frequent values that tell what a column holds
constexpr double kMinShare = 0.6;
constexpr double kShareSlack = 0.1;
constexpr uint32_t kTokenScanValues = 2000;  // word-by-word synonyms are looked for in columns up to this size

// "IsOfficial" -> is, official; "country_code" -> country, code.
std::vector<std::string> name_words(const std::string& name) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(name[i]);
    const bool boundary = std::isupper(ch) && i > 0 && std::islower(static_cast<unsigned char>(name[i - 1]));
    if (!std::isalnum(ch) || boundary) {
      if (!word.empty()) words.push_back(word);
      word.clear();
    }
    if (std::isalnum(ch)) word += static_cast<char>(std::tolower(ch));
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

bool has_word(const std::vector<std::string>& words, std::initializer_list<const char*> wanted) {
  for (const auto& word : words)
    for (const char* w : wanted)
      if (word == w) return true;
  return false;
}

std::vector<Channel> hinted_channels(const std::string& column) {
  const auto words = name_words(column);
  std::vector<Channel> out;
  if (has_word(words, {"country", "countries", "nation", "nationality", "citizenship", "ioc", "noc"}))
    out.push_back(Channel::Country);
  if (has_word(words, {"state", "states"})) out.push_back(Channel::UsState);
  if (has_word(words, {"sex", "gender"})) out.push_back(Channel::Gender);
  if (!words.empty() && has_word({words[0]}, {"is", "has", "was", "can", "allows"})) out.push_back(Channel::Boolean);
  if (has_word(words, {"month"})) out.push_back(Channel::Month);
  if (has_word(words, {"unit", "units"})) out.push_back(Channel::Unit);
  return out;
}

void add_value_ids(const DatabaseValues& d, const ColumnValues& column, const std::string& key, double score,
                   const std::string& channel, std::unordered_map<uint32_t, MeaningMatch>& best) {
  auto it = d.by_key.find(key);
  if (it == d.by_key.end()) return;
  for (uint32_t id : it->second) {
    if (id < column.first || id >= column.first + column.count) continue;
    auto [slot, inserted] = best.emplace(id, MeaningMatch{id, score, channel});
    if (!inserted && score > slot->second.score) slot->second = MeaningMatch{id, score, channel};
  }
}

using WordSynonyms = std::unordered_map<std::string, int>;  // key -> fewest WordNet links

// Word by word: same number of words, each the same (stemmed) or a WordNet synonym of the written one (also
// through the stored word's base form: "completed" -> "complete"), at least one a synonym. The score of the
// weakest link; 0 when the words do not match.
double synonym_words(const ValueLexicon& lexicon, const std::vector<std::string>& written,
                     const std::vector<WordSynonyms>& synonyms, const std::vector<std::string>& stored) {
  if (written.size() != stored.size()) return 0;
  double score = 1;
  for (size_t i = 0; i < written.size(); ++i) {
    if (stem_token(written[i]) == stem_token(stored[i])) continue;
    double best = 0;
    for (const auto& base : lexicon.base_forms(stored[i])) {
      auto it = synonyms[i].find(base);
      if (it != synonyms[i].end()) best = std::max(best, synonym_score(it->second));
    }
    auto it = synonyms[i].find(stored[i]);
    if (it != synonyms[i].end()) best = std::max(best, synonym_score(it->second));
    if (best == 0) return 0;
    score = std::min(score, best);
  }
  return score < 1 ? score : 0;
}

}  // namespace

double synonym_score(int links) { return links == 0 ? kSynonymScore : links == 1 ? kRelatedScore : kDistantScore; }

bool ColumnChannels::applies(Channel channel) const {
  return std::find(concepts.begin(), concepts.end(), channel) != concepts.end();
}

ColumnChannels column_channels(const DatabaseValues& d, const ColumnValues& column, const ValueLexicon& lexicon) {
  ColumnChannels out;
  out.synonyms = column.kind == ColumnKind::Text && column.vectors > 0;  // words, not codes or ids
  if (column.kind != ColumnKind::Text || column.count == 0) return out;
  out.concepts = hinted_channels(column.column);
  if (!out.concepts.empty()) return out;

  std::array<uint32_t, kChannels> covered{};
  const uint32_t profiled = std::min(column.count, kProfiledValues);
  for (uint32_t id = column.first; id < column.first + profiled; ++id) {
    std::array<bool, kChannels> seen{};
    for (uint32_t concept_id : lexicon.concepts_of(compact_value(d.normalized[id])))
      seen[static_cast<size_t>(lexicon.concept_at(concept_id).channel)] = true;
    for (size_t c = 0; c < kChannels; ++c) covered[c] += seen[c];
  }
  const double best = *std::max_element(covered.begin(), covered.end()) / static_cast<double>(profiled);
  for (size_t c = 0; c < kChannels; ++c) {
    const double share = covered[c] / static_cast<double>(profiled);
    if (share >= kMinShare && share >= best - kShareSlack) out.concepts.push_back(static_cast<Channel>(c));
  }
  return out;
}

std::vector<MeaningMatch> meaning_matches(const DatabaseValues& d, const ColumnValues& column,
                                          const PreparedValue& written, const ValueLexicon& lexicon,
                                          const ColumnChannels& channels) {
  std::unordered_map<uint32_t, MeaningMatch> best;
  if (written.compact.empty()) return {};
  std::vector<std::string> keys{written.compact};
  if (!written.key.empty() && written.key != written.compact) keys.push_back(written.key);
  for (const auto& key : keys) {
    for (uint32_t concept_id : lexicon.concepts_of(key)) {
      const auto& concept_entry = lexicon.concept_at(concept_id);
      if (!channels.applies(concept_entry.channel)) continue;
      for (const auto& form : concept_entry.keys)
        add_value_ids(d, column, form, kConceptScore, channel_name(concept_entry.channel), best);
    }
    if (channels.synonyms)
      for (const auto& synonym : lexicon.synonyms_of(key))
        add_value_ids(d, column, synonym.key, synonym_score(synonym.links), "wordnet", best);
  }
  if (channels.synonyms && column.count <= kTokenScanValues && !written.tokens.empty()) {
    std::vector<WordSynonyms> synonyms(written.tokens.size());
    bool any = false;
    for (size_t i = 0; i < written.tokens.size(); ++i) {
      for (const auto& synonym : lexicon.synonyms_of(written.tokens[i])) {
        auto [it, inserted] = synonyms[i].emplace(synonym.key, synonym.links);
        if (!inserted) it->second = std::min(it->second, synonym.links);
      }
      any = any || !synonyms[i].empty();
    }
    for (uint32_t id = column.first; any && id < column.first + column.count; ++id) {
      const double score = synonym_words(lexicon, written.tokens, synonyms, value_tokens(d.normalized[id]));
      if (score == 0) continue;
      auto [slot, inserted] = best.emplace(id, MeaningMatch{id, score, "wordnet"});
      if (!inserted && score > slot->second.score) slot->second = MeaningMatch{id, score, "wordnet"};
    }
  }
  std::vector<MeaningMatch> out;
  out.reserve(best.size());
  for (auto& [_, match] : best) out.push_back(std::move(match));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

}  // namespace relmem
