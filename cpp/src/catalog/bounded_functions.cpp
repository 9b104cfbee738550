#include "bounded_functions.hpp"

#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

#include "function_arguments.hpp"

namespace relmem {
namespace {

const char* find(std::string_view haystack, std::string_view needle, size_t from) {
  if (from > haystack.size()) return nullptr;
  return static_cast<const char*>(memmem(haystack.data() + from, haystack.size() - from, needle.data(), needle.size()));
}

// instr(X, Y): the 1-based position of Y's first occurrence in X (characters; bytes when both are blobs), else 0.
void instr_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (any_null(argc, argv)) return;
  const bool bytes = sqlite3_value_type(argv[0]) == SQLITE_BLOB && sqlite3_value_type(argv[1]) == SQLITE_BLOB;
  std::string_view haystack, needle;
  if (bytes) {
    haystack = blob_of(argv[0]);
    needle = blob_of(argv[1]);
  } else if (!text_of(context, argv[0], haystack) || !text_of(context, argv[1], needle)) {
    return;
  }
  const char* found = find(haystack, needle, 0);
  if (!found) {
    sqlite3_result_int64(context, 0);
    return;
  }
  const auto at = static_cast<size_t>(found - haystack.data());
  int64_t position = 1;
  for (size_t i = 0; i < at; ++i)
    if (bytes || (static_cast<unsigned char>(haystack[i]) & 0xC0) != 0x80) ++position;
  sqlite3_result_int64(context, position);
}

// replace(X, Y, Z): X with every occurrence of Y replaced by Z; X itself when Y is empty. Linear, and millions of
// short matches still watch the stop flag.
void replace_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (any_null(argc, argv)) return;
  std::string_view text, pattern, replacement;
  if (!text_of(context, argv[0], text) || !text_of(context, argv[1], pattern)) return;
  if (pattern.empty()) {
    sqlite3_result_value(context, argv[0]);
    return;
  }
  if (!text_of(context, argv[2], replacement)) return;
  const auto limit = static_cast<size_t>(sqlite3_limit(sqlite3_context_db_handle(context), SQLITE_LIMIT_LENGTH, -1));
  const std::atomic<bool>& stop = stop_flag(context);
  std::string out;
  size_t at = 0;
  uint64_t matches = 0;
  for (const char* found; (found = find(text, pattern, at)) != nullptr;) {
    if (++matches % kStepsPerStopCheck == 0 && stop.load(std::memory_order_relaxed)) {
      sqlite3_result_error_code(context, SQLITE_INTERRUPT);
      return;
    }
    const auto hit = static_cast<size_t>(found - text.data());
    out.append(text.substr(at, hit - at)).append(replacement);
    at = hit + pattern.size();
    if (out.size() > limit) {
      sqlite3_result_error_toobig(context);
      return;
    }
  }
  out.append(text.substr(at));
  if (out.size() > limit) {
    sqlite3_result_error_toobig(context);
    return;
  }
  sqlite3_result_text64(context, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

// One character as SQLite reads text: a byte, or a lead byte with the continuation bytes after it.
uint32_t read_char(std::string_view s, size_t& i) {
  uint32_t c = static_cast<unsigned char>(s[i++]);
  if (c < 0xC0) return c;
  c &= c >= 0xF0 ? 0x07 : c >= 0xE0 ? 0x0F : 0x1F;
  while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
    c = (c << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  return c;
}

uint32_t fold_ascii(uint32_t c) { return c < 0x80 ? static_cast<uint32_t>(std::tolower(static_cast<int>(c))) : c; }

enum class Outcome { Match, NoMatch, Interrupted };

// A LIKE or GLOB pattern matched against a text. Every pattern token but the wildcard for "any run" matches one
// character, so a mismatch only ever needs to go back to the last such wildcard (taking one more character):
// at most pattern × text steps.
class PatternMatcher {
 public:
  PatternMatcher(std::string_view pattern, bool glob, uint32_t escape, const std::atomic<bool>& stop)
      : pattern_(pattern), glob_(glob), escape_(escape), stop_(stop) {}

  Outcome match(std::string_view text) const {
    size_t p = 0, s = 0, star_p = std::string::npos, star_s = 0;
    for (uint64_t steps = 1;; ++steps) {
      if (steps % kStepsPerStopCheck == 0 && stop_.load(std::memory_order_relaxed)) return Outcome::Interrupted;
      if (p < pattern_.size()) {
        const Token token = token_at(p);
        if (token.kind == Kind::AnyRun) {
          p = star_p = token.next;
          star_s = s;
          continue;
        }
        if (s < text.size()) {
          size_t next_s = s;
          if (matches(token, read_char(text, next_s))) {
            p = token.next;
            s = next_s;
            continue;
          }
        }
      } else if (s == text.size()) {
        return Outcome::Match;
      }
      if (star_p == std::string::npos || star_s >= text.size()) return Outcome::NoMatch;
      read_char(text, star_s);  // the last "any run" takes one more character
      s = star_s;
      p = star_p;
    }
  }

 private:
  enum class Kind { AnyRun, AnyOne, Literal, Set, Never };
  struct Token {
    Kind kind;
    size_t next;                // the pattern offset after the token
    uint32_t literal = 0;
    std::string_view set;       // a GLOB set's members, without the brackets and the '^'
    bool inverted = false;
  };

  Token token_at(size_t p) const {
    const uint32_t c = read_char(pattern_, p);
    if (!glob_ && escape_ && c == escape_) {
      if (p >= pattern_.size()) return {Kind::Never, p};  // a trailing escape matches nothing, as in SQLite
      const uint32_t literal = read_char(pattern_, p);
      return {Kind::Literal, p, literal};
    }
    if (c == (glob_ ? '*' : '%')) return {Kind::AnyRun, p};
    if (c == (glob_ ? '?' : '_')) return {Kind::AnyOne, p};
    if (glob_ && c == '[') return set_at(p);
    return {Kind::Literal, p, c};
  }

  // The set that starts after '[' at p: "[^...]" inverts, a ']' first is a member, "a-z" is a range.
  Token set_at(size_t p) const {
    Token token{Kind::Set, p};
    if (p < pattern_.size() && pattern_[p] == '^') {
      token.inverted = true;
      ++p;
    }
    const size_t begin = p;
    if (p < pattern_.size() && pattern_[p] == ']') ++p;
    const size_t close = pattern_.find(']', p);
    if (close == std::string::npos) return {Kind::Never, pattern_.size()};  // never closed: matches nothing
    token.set = pattern_.substr(begin, close - begin);
    token.next = close + 1;
    return token;
  }

  static bool in_set(std::string_view set, uint32_t c) {
    size_t i = 0;
    uint32_t prior = 0;
    bool have_prior = false;
    while (i < set.size()) {
      const uint32_t member = read_char(set, i);
      if (member == '-' && have_prior && i < set.size()) {
        const uint32_t high = read_char(set, i);
        if (c >= prior && c <= high) return true;
        have_prior = false;
      } else {
        if (member == c) return true;
        prior = member;
        have_prior = true;
      }
    }
    return false;
  }

  bool matches(const Token& token, uint32_t c) const {
    switch (token.kind) {
      case Kind::AnyOne: return true;
      case Kind::Literal: return glob_ ? c == token.literal : fold_ascii(c) == fold_ascii(token.literal);
      case Kind::Set: return in_set(token.set, c) != token.inverted;
      default: return false;
    }
  }

  std::string_view pattern_;
  bool glob_;
  uint32_t escape_;
  const std::atomic<bool>& stop_;
};

void pattern_function(sqlite3_context* context, int argc, sqlite3_value** argv, bool glob) {
  sqlite3* db = sqlite3_context_db_handle(context);
  if (sqlite3_value_bytes(argv[0]) > sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, -1)) {
    sqlite3_result_error(context, "LIKE or GLOB pattern too complex", -1);
    return;
  }
  if (any_null(argc, argv)) return;
  uint32_t escape = 0;
  if (argc == 3) {
    std::string_view escape_text;
    if (!text_of(context, argv[2], escape_text)) return;
    size_t i = 0;
    if (!escape_text.empty()) escape = read_char(escape_text, i);
    if (escape_text.empty() || i != escape_text.size()) {
      sqlite3_result_error(context, "ESCAPE expression must be a single character", -1);
      return;
    }
  }
  std::string_view pattern, text;
  if (!text_of(context, argv[0], pattern) || !text_of(context, argv[1], text)) return;
  switch (PatternMatcher(pattern, glob, escape, stop_flag(context)).match(text)) {
    case Outcome::Match: sqlite3_result_int(context, 1); break;
    case Outcome::NoMatch: sqlite3_result_int(context, 0); break;
    case Outcome::Interrupted: sqlite3_result_error_code(context, SQLITE_INTERRUPT); break;
  }
}

void like_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  pattern_function(context, argc, argv, false);
}
void glob_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  pattern_function(context, argc, argv, true);
}

}  // namespace

void install_bounded_functions(sqlite3* db, const std::atomic<bool>* stop) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  void* user = const_cast<std::atomic<bool>*>(stop);
  sqlite3_create_function_v2(db, "instr", 2, kFlags, user, instr_function, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "replace", 3, kFlags, user, replace_function, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "like", 2, kFlags, user, like_function, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "like", 3, kFlags, user, like_function, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "glob", 2, kFlags, user, glob_function, nullptr, nullptr, nullptr);
  install_trim_functions(db, stop);
  install_checked_builtin_functions(db);
}

}  // namespace relmem
