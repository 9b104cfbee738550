#include "relmem/memories/text/question_spans.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

// Words of a question with their byte spans; punctuation at either end of a word is not part of it. A possessive
// word ("Kyle's") may also end before its "'s": values are stored without it.
struct Word {
  size_t start, end;
  std::string normalized;
  size_t possessive_end = 0;  // where "'s" or "\u2019s" starts; 0 when the word has none
};

size_t possessive_start(const std::string& question, size_t start, size_t end) {
  static const std::string kApostrophes[] = {"'", "\xE2\x80\x99"};
  if (question[end - 1] != 's' && question[end - 1] != 'S') return 0;
  for (const std::string& apostrophe : kApostrophes) {
    if (end - start < apostrophe.size() + 2) continue;  // a letter, the apostrophe and the s at least
    const size_t at = end - 1 - apostrophe.size();
    if (question.compare(at, apostrophe.size(), apostrophe) == 0) return at;
  }
  return 0;
}

bool is_edge_punctuation(unsigned char c) { return c < 0x80 && !std::isalnum(c) && c != '&'; }

std::vector<Word> question_words(const std::string& question) {
  std::vector<Word> words;
  size_t i = 0;
  while (i < question.size()) {
    while (i < question.size() && std::isspace(static_cast<unsigned char>(question[i]))) ++i;
    size_t end = i;
    while (end < question.size() && !std::isspace(static_cast<unsigned char>(question[end]))) ++end;
    size_t a = i, b = end;
    while (a < b && is_edge_punctuation(question[a])) ++a;
    while (b > a && is_edge_punctuation(question[b - 1])) --b;
    if (b > a)
      words.push_back(Word{a, b, normalize_value(question.substr(a, b - a)), possessive_start(question, a, b)});
    i = end;
  }
  return words;
}

// Words that never start or end a value span: question words, articles, prepositions, verbs of request.
bool is_stop_word(const std::string& w) {
  // clang-format off
  static const std::unordered_set<std::string> kStop = {
      "a", "about", "above", "after", "all", "also", "among", "an", "and", "any", "are", "as", "at", "average",
      "be", "been", "before", "below", "between", "both", "but", "by", "can", "count", "did", "do", "does",
      "each", "either", "every", "find", "for", "from", "give", "greater", "had", "has", "have", "her", "his",
      "how", "i", "in", "into", "is", "it", "its", "least", "less", "list", "lower", "many", "me", "more", "most",
      "much", "my", "name", "names", "neither", "no", "nor", "not", "number", "of", "on", "only", "or", "other",
      "our", "over", "per", "please", "return", "s", "show", "since", "smaller", "so", "some", "than", "that",
      "the", "their", "them", "there", "these", "they", "this", "those", "through", "to", "total", "under",
      "up", "us", "was", "we", "were", "what", "whats", "when", "where", "which", "while", "who", "whom",
      "whose", "why", "will", "with", "within", "without", "would", "you", "your"};
  // clang-format on
  return w.empty() || kStop.count(w) > 0;
}

bool is_quoted(const std::string& question, const QuestionSpan& span) {
  return span.start > 0 && (question[span.start - 1] == '"' || question[span.start - 1] == '\'');
}

bool starts_sentence(const std::string& question, size_t start) {
  size_t i = start;
  while (i > 0 && std::isspace(static_cast<unsigned char>(question[i - 1]))) --i;
  return i == 0 || question[i - 1] == '.' || question[i - 1] == '?' || question[i - 1] == '!' || question[i - 1] == ':';
}

}  // namespace

std::vector<QuestionSpan> question_spans(const std::string& question, int max_words) {
  std::vector<QuestionSpan> spans;
  const auto words = question_words(question);
  for (size_t i = 0; i < words.size(); ++i) {
    if (is_stop_word(words[i].normalized)) continue;
    for (size_t n = 1; n <= static_cast<size_t>(max_words) && i + n <= words.size(); ++n) {
      const Word& last = words[i + n - 1];
      if (is_stop_word(last.normalized)) continue;
      spans.push_back(QuestionSpan{words[i].start, last.end});
      if (last.possessive_end) spans.push_back(QuestionSpan{words[i].start, last.possessive_end});
    }
  }
  // Quoted phrases are values more often than anything else in a question.
  for (size_t open = 0; open < question.size(); ++open) {
    const char q = question[open];
    if (q != '"' && q != '\'') continue;
    if (q == '\'' && open > 0 && std::isalnum(static_cast<unsigned char>(question[open - 1]))) continue;  // it's
    const size_t close = question.find(q, open + 1);
    if (close == std::string::npos) break;
    if (close > open + 1) spans.push_back(QuestionSpan{open + 1, close});
    open = close;
  }
  std::sort(spans.begin(), spans.end(),
            [](const QuestionSpan& a, const QuestionSpan& b) { return a.start < b.start || (a.start == b.start && a.end < b.end); });
  spans.erase(std::unique(spans.begin(), spans.end(),
                          [](const QuestionSpan& a, const QuestionSpan& b) { return a.start == b.start && a.end == b.end; }),
              spans.end());
  return spans;
}

bool is_named(const std::string& question, const QuestionSpan& span) {
  if (span.start == 0 || span.start >= span.end) return false;
  if (is_quoted(question, span)) return true;
  return std::isupper(static_cast<unsigned char>(question[span.start])) && !starts_sentence(question, span.start);
}

bool is_proper_name(const std::string& question, const QuestionSpan& span) {
  if (span.start >= span.end || span.end > question.size()) return false;
  if (is_quoted(question, span)) return true;
  const std::string text = question.substr(span.start, span.end - span.start);
  const auto words = question_words(text);
  if (words.size() == 1) {
    const std::string word = text.substr(words[0].start, words[0].end - words[0].start);
    bool upper = false, lower = false;
    for (const unsigned char c : word) {
      upper = upper || std::isupper(c);
      lower = lower || std::islower(c);
    }
    if (word.size() >= 2 && upper && !lower) return true;
  }
  size_t capitalized = 0;
  for (const Word& word : words) {
    if (is_function_word(word.normalized)) continue;
    if (!std::isupper(static_cast<unsigned char>(text[word.start]))) return false;
    ++capitalized;
  }
  return capitalized >= (starts_sentence(question, span.start) ? 2u : 1u);
}

std::vector<std::string> question_phrases(const std::string& question, int max_words) {
  std::vector<std::string> phrases;
  for (const QuestionSpan& span : question_spans(question, max_words)) {
    std::string phrase = normalize_value(question.substr(span.start, span.end - span.start));
    if (!phrase.empty()) phrases.push_back(std::move(phrase));
  }
  std::sort(phrases.begin(), phrases.end());
  phrases.erase(std::unique(phrases.begin(), phrases.end()), phrases.end());
  return phrases;
}

}  // namespace relmem
