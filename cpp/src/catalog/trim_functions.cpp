#include <array>
#include <string_view>
#include <unordered_map>

#include "bounded_functions.hpp"
#include "function_arguments.hpp"

namespace relmem {
namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The characters of a trim set as SQLite splits them: one byte, or a lead byte (0xC0 and up) with the
// continuation bytes after it; the set ends at a NUL byte. Each character keeps its first position in the set,
// which decides between two that match at the same place (possible only in text that is not UTF-8).
class TrimSet {
 public:
  // Stops early, leaving stopped() true, when `stop` is set while a long set is read.
  TrimSet(std::string_view set, const std::atomic<bool>& stop) {
    single_.fill(SIZE_MAX);
    set = set.substr(0, set.find('\0'));
    for (size_t i = 0, index = 0; i < set.size(); ++index) {
      if (i % kStepsPerStopCheck == 0 && i > 0 && stop.load(std::memory_order_relaxed)) {
        stopped_ = true;
        return;
      }
      const size_t start = i;
      if (static_cast<unsigned char>(set[i++]) >= 0xC0)
        while (i < set.size() && is_continuation(static_cast<unsigned char>(set[i]))) ++i;
      const std::string_view character = set.substr(start, i - start);
      if (character.size() == 1) {
        size_t& first = single_[static_cast<unsigned char>(character[0])];
        if (first == SIZE_MAX) first = index;
      } else {
        longer_.emplace(character, index);
      }
      if (character.size() > longest_) longest_ = character.size();
      empty_ = false;
    }
  }

  bool empty() const { return empty_; }
  bool stopped() const { return stopped_; }
  size_t longest() const { return longest_; }

  // The set's position of `character`, or SIZE_MAX when it is not in the set.
  size_t position(std::string_view character) const {
    if (character.size() == 1) return single_[static_cast<unsigned char>(character[0])];
    const auto found = longer_.find(character);
    return found == longer_.end() ? SIZE_MAX : found->second;
  }

 private:
  std::array<size_t, 256> single_;
  std::unordered_map<std::string_view, size_t> longer_;
  size_t longest_ = 0;
  bool empty_ = true;
  bool stopped_ = false;
};

// Removes characters of `set` from the start and/or the end of `text`. Each step looks up the few characters that
// can begin (or end) at the current place, so valid UTF-8 costs one hash lookup per character whatever the size
// of the set; only a set of long invalid sequences makes a step longer, and those steps watch the stop flag.
class Trimmer {
 public:
  Trimmer(std::string_view text, const TrimSet& set, const std::atomic<bool>& stop)
      : text_(text), set_(set), stop_(stop) {}

  bool trim_start() {
    while (!text_.empty()) {
      size_t best = SIZE_MAX, length = 0;
      for (size_t n = 1; n <= text_.size() && n <= set_.longest(); ++n) {
        if (n > 1 && (static_cast<unsigned char>(text_[0]) < 0xC0 ||
                      !is_continuation(static_cast<unsigned char>(text_[n - 1]))))
          break;
        if (!consider(text_.substr(0, n), best, length)) return false;
      }
      if (best == SIZE_MAX) break;
      text_.remove_prefix(length);
    }
    return true;
  }

  bool trim_end() {
    while (!text_.empty()) {
      size_t best = SIZE_MAX, length = 0;
      if (!consider(text_.substr(text_.size() - 1), best, length)) return false;
      // The one longer candidate: continuation bytes back to a lead byte.
      for (size_t n = 2; n <= text_.size() && n <= set_.longest(); ++n) {
        const auto byte = static_cast<unsigned char>(text_[text_.size() - n]);
        if (!is_continuation(static_cast<unsigned char>(text_[text_.size() - n + 1]))) break;
        if (!tick(1)) return false;
        if (is_continuation(byte)) continue;
        if (byte >= 0xC0 && !consider(text_.substr(text_.size() - n), best, length)) return false;
        break;
      }
      if (best == SIZE_MAX) break;
      text_.remove_suffix(length);
    }
    return true;
  }

  std::string_view rest() const { return text_; }

 private:
  // Keeps `candidate` when the set holds it at an earlier position than `best`; false once stopped.
  bool consider(std::string_view candidate, size_t& best, size_t& length) {
    if (!tick(candidate.size())) return false;
    const size_t position = set_.position(candidate);
    if (position < best) {
      best = position;
      length = candidate.size();
    }
    return true;
  }

  bool tick(size_t steps) {
    steps_ += steps;
    if (steps_ < kStepsPerStopCheck) return true;
    steps_ = 0;
    return !stop_.load(std::memory_order_relaxed);
  }

  std::string_view text_;
  const TrimSet& set_;
  const std::atomic<bool>& stop_;
  uint64_t steps_ = 0;
};

enum Ends { kStart = 1, kEnd = 2, kBoth = 3 };

void trim(sqlite3_context* context, int argc, sqlite3_value** argv, Ends ends) {
  if (any_null(argc, argv)) return;
  std::string_view text, set_text = " ";
  if (!text_of(context, argv[0], text) || (argc == 2 && !text_of(context, argv[1], set_text))) return;
  const TrimSet set(set_text, stop_flag(context));
  Trimmer trimmer(text, set, stop_flag(context));
  if (set.stopped() || (!set.empty() && (((ends & kStart) && !trimmer.trim_start()) || ((ends & kEnd) && !trimmer.trim_end())))) {
    sqlite3_result_error_code(context, SQLITE_INTERRUPT);
    return;
  }
  const std::string_view rest = trimmer.rest();
  sqlite3_result_text64(context, rest.data(), rest.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void trim_function(sqlite3_context* context, int argc, sqlite3_value** argv) { trim(context, argc, argv, kBoth); }
void ltrim_function(sqlite3_context* context, int argc, sqlite3_value** argv) { trim(context, argc, argv, kStart); }
void rtrim_function(sqlite3_context* context, int argc, sqlite3_value** argv) { trim(context, argc, argv, kEnd); }

}  // namespace

void install_trim_functions(sqlite3* db, const std::atomic<bool>* stop) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  void* user = const_cast<std::atomic<bool>*>(stop);
  for (int argc : {1, 2}) {
    sqlite3_create_function_v2(db, "trim", argc, kFlags, user, trim_function, nullptr, nullptr, nullptr);
    sqlite3_create_function_v2(db, "ltrim", argc, kFlags, user, ltrim_function, nullptr, nullptr, nullptr);
    sqlite3_create_function_v2(db, "rtrim", argc, kFlags, user, rtrim_function, nullptr, nullptr, nullptr);
  }
}

}  // namespace relmem
