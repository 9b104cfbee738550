#include "relmem/memories/text/question_parts.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_set>

#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

constexpr size_t kNone = std::string::npos;
constexpr int kShortestSentencePart = 3;  // words

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_upper(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Without surrounding spaces and the ';' or ',' that joined it to its neighbours.
std::string trimmed(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && (is_space(text[begin]) || text[begin] == ';' || text[begin] == ',')) ++begin;
  while (end > begin && (is_space(text[end - 1]) || text[end - 1] == ';' || text[end - 1] == ',')) --end;
  return text.substr(begin, end - begin);
}

bool starts_with_word(const std::string& text, size_t at, const char* word) {
  const size_t n = std::strlen(word);
  if (at + n > text.size()) return false;
  for (size_t i = 0; i < n; ++i)
    if (lower(text[at + i]) != word[i]) return false;
  return at + n == text.size() || !is_alpha(text[at + n]);
}

size_t words(const std::string& text) {
  size_t count = 0;
  bool in_word = false;
  for (char c : text) {
    const bool word_char = !is_space(c);
    if (word_char && !in_word) ++count;
    in_word = word_char;
  }
  return count;
}

std::vector<std::string> non_empty(std::vector<std::string> parts) {
  std::vector<std::string> out;
  for (auto& part : parts) {
    part = trimmed(part);
    if (!part.empty()) out.push_back(std::move(part));
  }
  return out;
}

// End of a "Q<digits>:" marker starting at i (at a word start), or kNone.
size_t template_marker_end(const std::string& text, size_t i) {
  if (i > 0 && !is_space(text[i - 1]) && text[i - 1] != ';') return kNone;
  if (text[i] != 'Q') return kNone;
  size_t j = i + 1;
  while (j < text.size() && is_digit(text[j])) ++j;
  if (j == i + 1 || j >= text.size() || text[j] != ':') return kNone;
  return j + 1;
}

// The text after each marker that `marker_end` finds (returning the marker's end and its ordinal, or kNone).
template <typename MarkerEnd>
std::vector<std::string> marked_parts(const std::string& question, MarkerEnd marker_end) {
  std::vector<std::string> parts;
  size_t start = kNone;
  for (size_t i = 0; i < question.size(); ++i) {
    const size_t end = marker_end(question, i, parts.size() + (start != kNone ? 1 : 0));
    if (end == kNone) continue;
    if (start != kNone) parts.push_back(question.substr(start, i - start));
    start = end;
    i = end - 1;
  }
  if (start != kNone) parts.push_back(question.substr(start));
  return non_empty(std::move(parts));
}

// Whether position i starts a line, the text or a sentence (after ".", "?", "!", ":" or ";" and spaces).
bool at_item_start(const std::string& text, size_t i, bool lines_only) {
  size_t j = i;
  while (j > 0 && text[j - 1] != '\n' && is_space(text[j - 1])) --j;
  if (j == 0 || text[j - 1] == '\n') return true;
  if (lines_only || j == i) return false;
  return std::strchr(".?!:;", text[j - 1]) != nullptr;
}

// End of the `ordinal`-th (from 0) list marker at i: "1." "1)" "(1)" "a)" "(a)" counting up, or a bullet at a line
// start; kNone otherwise.
size_t list_marker_end(const std::string& text, size_t i, size_t ordinal) {
  const size_t n = text.size();
  auto followed_by_space = [&](size_t j) { return j + 1 < n && is_space(text[j + 1]) ? j + 2 : kNone; };
  if ((text[i] == '-' || text[i] == '*') && at_item_start(text, i, true)) return followed_by_space(i);
  if (text.compare(i, 3, "\xe2\x80\xa2") == 0 && at_item_start(text, i, true)) return followed_by_space(i + 2);
  // The first marker starts the text, a line or a sentence; later ones may follow any space ("(a) x (b) y").
  const bool continues = ordinal > 0 && i > 0 && is_space(text[i - 1]);
  if (!continues && !at_item_start(text, i, false)) return kNone;
  const bool parenthesized = text[i] == '(';
  size_t j = parenthesized ? i + 1 : i;
  if (j >= n) return kNone;
  const std::string number = std::to_string(ordinal + 1);
  if (text.compare(j, number.size(), number) == 0 && !(j + number.size() < n && is_digit(text[j + number.size()]))) {
    j += number.size();
  } else if (text[j] == static_cast<char>('a' + ordinal) && ordinal < 8) {
    ++j;
  } else {
    return kNone;
  }
  if (j >= n) return kNone;
  if (parenthesized) return text[j] == ')' ? followed_by_space(j) : kNone;
  if (text[j] == ')' || (text[j] == '.' && is_digit(text[i]))) return followed_by_space(j);
  return kNone;
}

// Whether the '.' at i ends an abbreviation or an initial ("e.g.", "Dr.", "J.") rather than a sentence.
bool ends_abbreviation(const std::string& text, size_t i) {
  size_t begin = i;
  while (begin > 0 && (is_alpha(text[begin - 1]) || text[begin - 1] == '.')) --begin;
  std::string word;
  for (size_t j = begin; j < i; ++j)
    if (text[j] != '.') word += lower(text[j]);
  static const char* const kAbbreviations[] = {"eg", "ie", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "no",
                                               "jr", "sr", "inc", "ltd", "co", "corp", "approx"};
  if (word.size() == 1) return true;
  return std::any_of(std::begin(kAbbreviations), std::end(kAbbreviations), [&](const char* a) { return word == a; });
}

// Whether a question or request starts at i: "what", "how", "list", "show", ... as a whole word.
bool starts_question_word(const std::string& text, size_t i) {
  static const char* const kQuestionWords[] = {"what", "which", "who", "whose", "where", "when", "how", "list",
                                               "show", "find", "give", "return", "count", "display", "tell"};
  return std::any_of(std::begin(kQuestionWords), std::end(kQuestionWords),
                     [&](const char* word) { return starts_with_word(text, i, word); });
}

// Where the sentence ending at the punctuation at i stops, and where the next one starts; kNone when it does not end.
std::pair<size_t, size_t> sentence_end(const std::string& text, size_t i) {
  const size_t n = text.size();
  if (text[i] == '\n') return {i, i + 1};
  if (!std::strchr(".?!", text[i])) return {kNone, kNone};
  size_t end = i + 1;
  while (end < n && std::strchr(".?!\"')", text[end])) ++end;
  size_t next = end;
  while (next < n && is_space(text[next])) ++next;
  if (end == next || next == n) return {kNone, kNone};
  const char c = text[next];
  if (text[i] == '.') {
    // "... in screen mode. how many dependents ...": a question word starts a sentence in lower case too.
    if (!(is_upper(c) || c == '"' || c == '\'' || starts_question_word(text, next)) || ends_abbreviation(text, i))
      return {kNone, kNone};
  }
  return {end, next};
}

// Where a sentence that lost its full stop starts at i: a capitalized question word after a lower-case word, a
// number ("... venues of debates What is the ...") or a closing quote ("... named 'HMS Atalanta' How many ..."), but
// not after a word no sentence ends with ("the Show with the most viewers"); kNone otherwise.
size_t run_on_start(const std::string& text, size_t i) {
  if (i < 2 || !is_upper(text[i]) || !is_space(text[i - 1]) || !starts_question_word(text, i)) return kNone;
  size_t end = i - 1;
  while (end > 0 && is_space(text[end - 1])) --end;
  const bool closing_quote = end >= 2 && (text[end - 1] == '\'' || text[end - 1] == '"') && !is_space(text[end - 2]);
  if (closing_quote) return i;
  size_t begin = end;
  while (begin > 0 && (is_alpha(text[begin - 1]) || is_digit(text[begin - 1]))) --begin;
  if (begin == end || !(std::islower(static_cast<unsigned char>(text[end - 1])) || is_digit(text[end - 1])))
    return kNone;
  static const char* const kNoSentenceEnd[] = {"the", "a", "an", "of", "in", "on", "at", "to", "for", "with", "by",
                                               "from", "and", "or", "is", "are", "was", "were", "their", "its"};
  const bool joins = std::any_of(std::begin(kNoSentenceEnd), std::end(kNoSentenceEnd),
                                 [&](const char* word) { return starts_with_word(text, begin, word) &&
                                                                begin + std::strlen(word) == end; });
  return joins ? kNone : i;
}

// Where a clause joined by "and also" or "; also" starts at i (after the joining words), or kNone.
size_t clause_start(const std::string& text, size_t i) {
  if (i == 0 || !is_space(text[i - 1])) return kNone;
  size_t before = i - 1;
  while (before > 0 && is_space(text[before - 1])) --before;
  const bool after_semicolon = before > 0 && text[before - 1] == ';';
  size_t j = i;
  if (starts_with_word(text, j, "and")) {
    j += 3;
    while (j < text.size() && is_space(text[j])) ++j;
    if (!starts_with_word(text, j, "also")) return kNone;
  } else if (!(after_semicolon && starts_with_word(text, j, "also"))) {
    return kNone;
  }
  return j;  // at "also", dropped below with the other leading "also"s
}

// "Also, how many ..." -> "how many ...".
std::string without_leading_also(std::string part) {
  part = trimmed(part);
  if (starts_with_word(part, 0, "also")) part = trimmed(part.substr(4));
  return part;
}

// The words of three letters or more among a text's tokens (value_tokens(normalize_value(text))) that name something
// of its topic: no function words, no request verbs, no attributes every schema has ("name", "id", "type"); plurals
// stemmed ("parties" -> "party").
std::unordered_set<std::string> topic_words(const std::vector<std::string>& tokens) {
  // clang-format off
  static const std::unordered_set<std::string> kGeneric = {
      "the", "for", "with", "from", "and", "are", "was", "were", "been", "their", "these", "those", "them", "his",
      "her", "its", "they", "each", "both", "all", "what", "which", "who", "whose", "how", "many", "much", "list",
      "give", "return", "show", "find", "tell", "sort", "order", "output", "report", "print", "also", "that",
      "this", "than", "more", "less", "most", "least", "number", "numbers", "name", "names", "ids", "total",
      "count", "average", "please", "different", "distinct", "there", "does", "did", "have", "has", "not", "any",
      "every", "per", "first", "last", "details", "detail", "type", "types", "code", "codes"};
  // clang-format on
  std::unordered_set<std::string> out;
  for (const auto& word : tokens) {
    if (word.size() >= 3 && !kGeneric.count(word)) out.insert(stem_token(word));
  }
  return out;
}

// Whether `part` only follows up on the sentence before it ("Which customers have a policy of type 'Deputy'? Return
// the customer details."): a short request that refers back by a pronoun or by a topic word of that sentence. It
// names no database of its own, so it stays with the sentence it follows.
bool follows_up(const std::string& previous, const std::string& part) {
  constexpr size_t kLongestFollowUp = 8;  // words; chosen on plain 3-part composites of train_spider.json
  static const std::unordered_set<std::string> kRequests = {"list",   "give",   "return", "show",  "find",
                                                            "tell",   "sort",   "order",  "output", "report",
                                                            "print",  "and",    "count",  "for"};
  static const std::unordered_set<std::string> kReferring = {"their", "these", "those", "them", "his", "her",
                                                             "its",   "they",  "both",  "him",  "this"};
  const std::vector<std::string> part_words = value_tokens(normalize_value(part));
  if (part_words.empty() || words(part) > kLongestFollowUp || !kRequests.count(part_words[0])) return false;
  if (std::any_of(part_words.begin(), part_words.end(), [](const std::string& w) { return kReferring.count(w) > 0; }))
    return true;
  const std::unordered_set<std::string> before = topic_words(value_tokens(normalize_value(previous)));
  for (const auto& word : topic_words(part_words))
    if (before.count(word)) return true;
  return false;
}

std::vector<std::string> sentence_parts(const std::string& question) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i < question.size(); ++i) {
    auto [end, next] = sentence_end(question, i);
    if (end == kNone) {
      size_t clause = clause_start(question, i);
      if (clause == kNone && i > start) clause = run_on_start(question, i);
      if (clause == kNone) continue;
      end = i;
      next = clause;
    }
    parts.push_back(question.substr(start, end - start));
    start = next;
    i = next - 1;
  }
  parts.push_back(question.substr(start));
  std::vector<std::string> out;
  for (auto& part : parts) {
    part = without_leading_also(part);
    if (part.empty()) continue;
    if (!out.empty() && (words(part) < kShortestSentencePart || words(out.back()) < kShortestSentencePart ||
                         follows_up(out.back(), part))) {
      out.back() += " " + part;
    } else {
      out.push_back(std::move(part));
    }
  }
  return out;
}

}  // namespace

QuestionParts split_question(const std::string& question) {
  std::vector<std::string> parts =
      marked_parts(question, [](const std::string& text, size_t i, size_t) { return template_marker_end(text, i); });
  if (parts.size() < 2) parts = marked_parts(question, list_marker_end);
  if (parts.size() >= 2) return {std::move(parts), true};
  parts = sentence_parts(question);
  if (parts.size() >= 2) return {std::move(parts), false};
  return {{question}, false};
}

std::vector<std::string> question_parts(const std::string& question) { return split_question(question).texts; }

}  // namespace relmem
