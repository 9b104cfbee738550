#include "relmem/memories/text/string_similarity.hpp"

#include <algorithm>
#include <array>

#include "../../common/utf8.hpp"

namespace relmem {
namespace {

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Base letters of U+00C0..U+00FF ('_' marks the two symbols × and ÷); multi-letter folds are handled apart.
constexpr const char* kLatin1 =
    "aaaaaaeceeeeiiiidnooooo_ouuuuyts"
    "aaaaaaeceeeeiiiidnooooo_ouuuuyty";

// Base letters of U+0100..U+017F (Latin Extended-A), two per upper/lower pair.
char latin_extended_a(uint32_t cp) {
  struct Range {
    uint32_t first, last;
    char base;
  };
  static constexpr std::array<Range, 20> kRanges{{
      {0x100, 0x105, 'a'}, {0x106, 0x10D, 'c'}, {0x10E, 0x111, 'd'}, {0x112, 0x11B, 'e'}, {0x11C, 0x123, 'g'},
      {0x124, 0x127, 'h'}, {0x128, 0x131, 'i'}, {0x134, 0x135, 'j'}, {0x136, 0x138, 'k'}, {0x139, 0x142, 'l'},
      {0x143, 0x14B, 'n'}, {0x14C, 0x151, 'o'}, {0x154, 0x159, 'r'}, {0x15A, 0x161, 's'}, {0x162, 0x167, 't'},
      {0x168, 0x173, 'u'}, {0x174, 0x175, 'w'}, {0x176, 0x178, 'y'}, {0x179, 0x17E, 'z'}, {0x17F, 0x17F, 's'},
  }};
  for (const auto& r : kRanges)
    if (cp >= r.first && cp <= r.last) return r.base;
  return 0;
}

enum class Fold { Letters, Space, Drop };

// Appends the folded form of one code point; says whether it was a letter/digit, a separator or nothing.
Fold fold(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    const char c = static_cast<char>(cp);
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
      return Fold::Letters;
    }
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
      return Fold::Letters;
    }
    if (c == '\'' || c == '`') return Fold::Drop;
    return Fold::Space;
  }
  if (cp == 0xC6 || cp == 0xE6) return out += "ae", Fold::Letters;
  if (cp == 0xDE || cp == 0xFE) return out += "th", Fold::Letters;
  if (cp == 0xDF) return out += "ss", Fold::Letters;
  if (cp == 0x132 || cp == 0x133) return out += "ij", Fold::Letters;
  if (cp == 0x152 || cp == 0x153) return out += "oe", Fold::Letters;
  if (cp >= 0xC0 && cp <= 0xFF) {
    const char base = kLatin1[cp - 0xC0];
    if (base == '_') return Fold::Space;
    out += base;
    return Fold::Letters;
  }
  if (cp >= 0x100 && cp <= 0x17F) {
    out += latin_extended_a(cp);
    return Fold::Letters;
  }
  if (cp >= 0x300 && cp <= 0x36F) return Fold::Drop;                    // combining accents
  if (cp == 0x2018 || cp == 0x2019 || cp == 0x2032) return Fold::Drop;  // typographic apostrophes
  if (cp < 0xC0 || (cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) || cp == 0xFEFF)
    return Fold::Space;  // Latin-1 symbols, general punctuation, arrows, math, CJK punctuation
  append_utf8(cp, out);  // other scripts are kept as they are
  return Fold::Letters;
}

bool starts_with(const std::vector<uint32_t>& text, const std::vector<uint32_t>& prefix) {
  return prefix.size() <= text.size() && std::equal(prefix.begin(), prefix.end(), text.begin());
}

// Abbreviations drop a good part of a word; a near-complete word is a variant or a typo ("Robin" / "Robbin").
bool is_short_form(size_t shorter, size_t longer) { return shorter * 10 <= longer * 7; }

bool is_vowel(uint32_t c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// One word abbreviating another: a prefix of it, then some of the rest's consonants in order ("intl" /
// "international", "dept", "mktg"). Abbreviations drop vowels: "paid" is no abbreviation of "partfilled".
// Returns the share of the consonants after the prefix, up to the last one written, that the abbreviation keeps:
// 1 when it drops only vowels ("brnd" / "brander", "gln" / "giuliano"), less the more consonants it passes over
// ("ind" / "ireland" keeps n, d of r, l, n, d: 0.5); 0 when it is no abbreviation.
double abbreviation_fit(const std::vector<uint32_t>& shorter, const std::vector<uint32_t>& longer) {
  if (shorter.empty() || !is_short_form(shorter.size(), longer.size()) || shorter[0] != longer[0]) return 0.0;
  size_t prefix = 0;
  while (prefix < shorter.size() && shorter[prefix] == longer[prefix]) ++prefix;
  if (std::any_of(shorter.begin() + prefix, shorter.end(), is_vowel)) return 0.0;
  size_t j = prefix, passed = 0;  // the earliest match of each written consonant passes over the fewest
  for (size_t i = prefix; i < longer.size() && j < shorter.size(); ++i) {
    if (!is_vowel(longer[i])) ++passed;
    if (longer[i] == shorter[j]) ++j;
  }
  if (j < shorter.size()) return 0.0;
  return passed == 0 ? 1.0 : static_cast<double>(shorter.size() - prefix) / passed;
}

bool abbreviates_word(const std::vector<uint32_t>& shorter, const std::vector<uint32_t>& longer) {
  return abbreviation_fit(shorter, longer) > 0;
}

std::vector<uint32_t> initials(const std::vector<std::string>& tokens, bool skip_function_words) {
  std::vector<uint32_t> out;
  for (const auto& token : tokens) {
    if (skip_function_words && is_function_word(token)) continue;
    const auto cps = code_points(token);
    if (!cps.empty()) out.push_back(cps[0]);
  }
  return out;
}

// Fewer words where some words stand for the initials of two to four words of the longer value, the rest the same
// ("IT Staff" / "Information Technology Staff", "Welcome to NY" / "Welcome to New York"): word by word, in order.
bool initialism_inside(const std::vector<std::string>& short_tokens, const std::vector<std::string>& long_tokens) {
  if (short_tokens.size() < 2 || short_tokens.size() >= long_tokens.size()) return false;
  size_t j = 0;
  bool any = false;
  for (const auto& token : short_tokens) {
    if (j < long_tokens.size() && stem_token(token) == stem_token(long_tokens[j])) {
      ++j;
      continue;
    }
    const auto letters = code_points(token);
    if (letters.size() < 2 || letters.size() > 4 || j + letters.size() > long_tokens.size()) return false;
    const std::vector<std::string> run(long_tokens.begin() + j, long_tokens.begin() + j + letters.size());
    if (initials(run, false) != letters) return false;
    j += letters.size();
    any = true;
  }
  return any && j == long_tokens.size();
}

}  // namespace

std::vector<uint32_t> code_points(const std::string& text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = text[i];
    const size_t len = std::max<size_t>(1, utf8_sequence_length(text, i));
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t j = 1; j < len; ++j) cp = (cp << 6) | (static_cast<unsigned char>(text[i + j]) & 0x3F);
    out.push_back(cp);  // a malformed byte stands for itself, as Latin-1
    i += len;
  }
  return out;
}

std::string normalize_value(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (uint32_t cp : code_points(text)) {
    std::string piece;
    const bool ampersand = cp == '&';  // a word of its own: "R&D" -> "r and d"
    const Fold kind = ampersand ? (piece = "and", Fold::Letters) : fold(cp, piece);
    if (kind == Fold::Drop) continue;
    if (kind == Fold::Space) {
      pending_space = true;
      continue;
    }
    if ((pending_space || ampersand) && !out.empty()) out += ' ';
    out += piece;
    pending_space = ampersand;
  }
  return out;
}

std::vector<std::string> value_tokens(const std::string& normalized) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start < normalized.size()) {
    size_t end = normalized.find(' ', start);
    if (end == std::string::npos) end = normalized.size();
    if (end > start) tokens.push_back(normalized.substr(start, end - start));
    start = end + 1;
  }
  return tokens;
}

std::string compact_value(const std::string& normalized) {
  std::string out;
  out.reserve(normalized.size());
  for (char c : normalized)
    if (c != ' ') out += c;
  return out;
}

bool is_function_word(const std::string& token) { return token == "and" || token == "of" || token == "the"; }

std::string initials_text(const std::vector<std::string>& tokens, bool skip_function_words) {
  std::string out;
  for (const auto& token : tokens) {
    if (token.empty() || (skip_function_words && is_function_word(token))) continue;
    const unsigned char lead = token[0];
    const size_t length = lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    out += token.substr(0, length);
  }
  return out;
}

std::string content_key(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& token : tokens)
    if (!is_function_word(token)) out += token;
  return out;
}

std::string stem_token(const std::string& token) {
  const size_t n = token.size();
  auto ends = [&](const char* suffix) {
    const size_t m = std::char_traits<char>::length(suffix);
    return n > m && token.compare(n - m, m, suffix) == 0;
  };
  if (n > 4 && ends("ies")) return token.substr(0, n - 3) + "y";
  if (n > 4 && (ends("ches") || ends("shes") || ends("sses") || ends("xes") || ends("zes")))
    return token.substr(0, n - 2);
  if (n > 3 && ends("s") && !ends("ss") && !ends("us") && !ends("is")) return token.substr(0, n - 1);
  return token;
}

std::vector<uint32_t> trigram_set(const std::string& normalized) {
  std::vector<uint32_t> cps{' '};
  const auto inner = code_points(normalized);
  cps.insert(cps.end(), inner.begin(), inner.end());
  cps.push_back(' ');
  std::vector<uint32_t> grams;
  grams.reserve(cps.size());
  for (size_t i = 0; i + 3 <= cps.size(); ++i) {
    uint32_t h = 2166136261u;
    for (size_t j = i; j < i + 3; ++j) h = (h ^ cps[j]) * 16777619u;
    grams.push_back(h);
  }
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  return grams;
}

double trigram_dice(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty() || b.empty()) return 0.0;
  size_t i = 0, j = 0, shared = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      ++shared, ++i, ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return 2.0 * shared / static_cast<double>(a.size() + b.size());
}

int edit_distance(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int best = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) best = std::min(best, before[j - 2] + 1);
      current[j] = best;
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

double edit_similarity(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const size_t longer = std::max(a.size(), b.size());
  if (longer == 0) return 1.0;
  return 1.0 - edit_distance(a, b) / static_cast<double>(longer);
}

double token_similarity(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return 0.0;
  std::vector<std::string> sa, sb;
  std::vector<std::vector<uint32_t>> ca, cb;
  for (const auto& t : a) sa.push_back(stem_token(t)), ca.push_back(code_points(sa.back()));
  for (const auto& t : b) sb.push_back(stem_token(t)), cb.push_back(code_points(sb.back()));
  auto pair_score = [&](size_t i, size_t j) {
    if (sa[i] == sb[j]) return 1.0;
    if (ca[i].size() < 4 || cb[j].size() < 4) return 0.0;
    const double s = edit_similarity(ca[i], cb[j]);
    return s >= 0.75 ? s : 0.0;
  };
  double matched_a = 0, matched_b = 0;
  std::vector<double> best_b(b.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i) {
    double best = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      const double s = pair_score(i, j);
      best = std::max(best, s);
      best_b[j] = std::max(best_b[j], s);
    }
    matched_a += best;
  }
  for (double s : best_b) matched_b += s;
  const double precision = matched_a / a.size(), recall = matched_b / b.size();
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

double abbreviation_score(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return 0.0;
  std::string joined_a, joined_b;
  for (const auto& t : a) joined_a += t;
  for (const auto& t : b) joined_b += t;
  const auto ca = code_points(joined_a), cb = code_points(joined_b);
  if (ca == cb) return 0.0;
  const bool a_shorter = ca.size() < cb.size() || (ca.size() == cb.size() && a.size() < b.size());
  const auto& short_tokens = a_shorter ? a : b;
  const auto& long_tokens = a_shorter ? b : a;
  const auto& cs = a_shorter ? ca : cb;
  const auto& cl = a_shorter ? cb : ca;
  if (cs.empty()) return 0.0;

  double best = 0.0;
  const auto short_key = code_points(content_key(short_tokens));  // "r and d" -> "rd"
  if (long_tokens.size() >= 2 && cs.size() >= 2) {
    const auto all = initials(long_tokens, false), content = initials(long_tokens, true);
    if (cs == all || cs == content || (short_key.size() >= 2 && short_key == content)) best = 0.95;
  }
  // A prefix ending where a word of a multi-word value ends is a dropped word ("Florida" / "Florida State"), left
  // to token_similarity; so is a prefix nearly as long as the value ("Steve" / "Steven").
  size_t boundary = 0;
  bool at_boundary = false;
  for (const auto& token : long_tokens) {
    boundary += code_points(token).size();
    at_boundary = at_boundary || boundary == cs.size();
  }
  if (starts_with(cl, cs) && is_short_form(cs.size(), cl.size())) {
    if (cs.size() >= 3 && (long_tokens.size() == 1 || !at_boundary))
      best = std::max(best, 0.9);
    else if (cs.size() == 2 && long_tokens.size() == 1)
      best = std::max(best, 0.8);
    else if (cs.size() == 1 && long_tokens.size() == 1)
      best = std::max(best, 0.75);
  }
  if (short_tokens.size() == long_tokens.size() && short_tokens.size() >= 2) {
    bool all = true, any_abbreviated = false;
    for (size_t i = 0; i < short_tokens.size() && all; ++i) {
      if (stem_token(short_tokens[i]) == stem_token(long_tokens[i])) continue;
      const auto s = code_points(short_tokens[i]), l = code_points(long_tokens[i]);
      if (abbreviates_word(s, l) || abbreviates_word(l, s)) {
        any_abbreviated = true;
      } else {
        all = false;
      }
    }
    if (all && any_abbreviated) best = std::max(best, 0.88);
  }
  if (initialism_inside(short_tokens, long_tokens)) best = std::max(best, 0.9);
  if (short_tokens.size() == 1 && long_tokens.size() == 1 && cs.size() >= 2) {
    const double fit = abbreviation_fit(cs, cl);  // a consonant passed over makes another word likelier
    if (fit > 0) best = std::max(best, cs.size() >= 3 ? 0.75 + 0.1 * fit : 0.6);
  }
  return best;
}

}  // namespace relmem
