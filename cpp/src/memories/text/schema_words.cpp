#include "relmem/memories/text/schema_words.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "relmem/catalog/catalog.hpp"

namespace relmem {
namespace {

// Abbreviations common in schema names (Spider's among them), with what they stand for.
const std::map<std::string, std::string>& abbreviations() {
  static const std::map<std::string, std::string> table = {
      {"fname", "first name"}, {"lname", "last name"}, {"mname", "middle name"}, {"dob", "date of birth"},
      {"num", "number"},       {"qty", "quantity"},    {"amt", "amount"},        {"addr", "address"},
      {"desc", "description"}, {"dept", "department"}, {"emp", "employee"},      {"stu", "student"},
      {"cust", "customer"},    {"prod", "product"},    {"org", "organization"},  {"loc", "location"},
      {"yr", "year"},          {"avg", "average"},     {"tel", "telephone"},     {"mgr", "manager"},
      {"info", "information"}, {"pct", "percent"},     {"cnt", "count"},         {"lang", "language"},
      {"pop", "population"},   {"crs", "course"},      {"prof", "professor"},    {"sal", "salary"},
      {"hrs", "hours"},        {"ht", "height"},       {"wt", "weight"},         {"gnp", "gross national product"},
      {"govt", "government"},  {"admin", "administrator"}, {"acct", "account"},  {"std", "student"},
  };
  return table;
}

// Words too common in schemas (or too short) to be worth synonyms.
bool skipped(const std::string& word) {
  static const std::set<std::string> common = {"id", "name", "type", "code", "date", "number", "the", "and",
                                               "of", "for", "other", "details", "detail", "value", "key"};
  return word.size() < 3 || common.count(word) > 0 ||
         std::any_of(word.begin(), word.end(), [](unsigned char c) { return std::isdigit(c); });
}

void split_into(const std::string& text, std::vector<std::string>& out) {
  std::string word;
  auto flush = [&] {
    if (!word.empty()) out.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '_' || c == '-' || std::isspace(c) || c == '.') {
      flush();
      continue;
    }
    if (i > 0 && std::isupper(c) && std::islower(static_cast<unsigned char>(text[i - 1]))) flush();
    word += static_cast<char>(std::tolower(c));
  }
  flush();
}

}  // namespace

std::vector<std::string> identifier_words(const std::string& identifier) {
  std::vector<std::string> words, out;
  split_into(identifier, words);
  for (const auto& word : words) {
    out.push_back(word);
    auto found = abbreviations().find(word);
    if (found != abbreviations().end()) split_into(found->second, out);
  }
  return out;
}

std::string compound_split(const std::string& word, const WordNet& wordnet) {
  if (word.size() < 5 || !std::all_of(word.begin(), word.end(), [](unsigned char c) { return std::islower(c); }) ||
      !wordnet.base_form(word).empty() || abbreviations().count(word))
    return "";
  // A part is a listed word of 3 letters or more, or a one-letter initial before a word ("dphone"), or "id" after one.
  auto listed = [&](const std::string& part) { return part.size() >= 3 && !wordnet.base_form(part).empty(); };
  std::string best;
  int best_rank = -1;
  for (size_t cut = 1; cut < word.size(); ++cut) {
    const std::string head = word.substr(0, cut), tail = word.substr(cut);
    const bool initial = head.size() == 1 && tail.size() >= 4, id = tail == "id";
    if (!(initial || listed(head)) || !(id || listed(tail))) continue;
    const int as_written = (initial || wordnet.contains(head)) + (id || wordnet.contains(tail));
    const int rank = id * 1000 + as_written * 100 + static_cast<int>(tail.size());
    if (rank > best_rank) {
      best_rank = rank;
      best = head + " " + tail;
    }
  }
  return best;
}

std::string readable_identifier(const std::string& identifier, const WordNet* wordnet) {
  const std::string humanized = humanize_identifier(identifier);
  if (!wordnet) return humanized;
  std::istringstream words(humanized);
  std::string word, out;
  while (words >> word) {
    const std::string split = compound_split(word, *wordnet);
    out += (out.empty() ? "" : " ") + (split.empty() ? word : split);
  }
  return out;
}

std::string schema_synonyms(const std::vector<std::string>& identifiers, const WordNet* wordnet, int senses,
                            int per_word) {
  if (!wordnet) return "";
  std::set<std::string> own;       // the words written in the identifiers
  std::vector<std::string> words;  // those and the expansions of abbreviations among them, each once
  for (const auto& identifier : identifiers) {
    std::vector<std::string> written;
    split_into(identifier, written);
    own.insert(written.begin(), written.end());
    for (const auto& word : identifier_words(identifier)) {
      std::vector<std::string> expanded{word};
      split_into(compound_split(word, *wordnet), expanded);
      for (const auto& one : expanded)
        if (std::find(words.begin(), words.end(), one) == words.end()) words.push_back(one);
    }
  }
  std::set<std::string> seen;
  std::string out;
  auto add = [&](const std::string& text) {
    if (own.count(text) || !seen.insert(text).second) return;
    out += (out.empty() ? "" : " ") + text;
  };
  for (const auto& word : words) {
    if (abbreviations().count(word)) continue;
    add(word);  // an abbreviation's expansion
    if (skipped(word)) continue;
    const std::vector<std::string> synonyms = wordnet->synonyms(word, senses, true);
    for (size_t i = 0; i < synonyms.size() && i < static_cast<size_t>(per_word); ++i) add(synonyms[i]);
  }
  return out;
}

}  // namespace relmem
