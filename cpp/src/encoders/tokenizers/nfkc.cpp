#include "nfkc.hpp"

#include <algorithm>

#include "nfkc_data.hpp"

namespace relmem::nfkc {
namespace {

// Hangul syllables decompose and compose algorithmically (Unicode 3.12).
constexpr char32_t kSyllableBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr char32_t kLeadCount = 19, kVowelCount = 21, kTrailCount = 28;
constexpr char32_t kSyllableCount = kLeadCount * kVowelCount * kTrailCount;

bool is_syllable(char32_t cp) { return cp >= kSyllableBase && cp < kSyllableBase + kSyllableCount; }

int combining_rank(char32_t cp) {
  if (cp < 0x300) return 0;  // no combining marks below U+0300
  const CombiningRank* end = kCombiningRanks + kCombiningRankCount;
  const CombiningRank* it =
      std::lower_bound(kCombiningRanks, end, cp, [](const CombiningRank& e, char32_t c) { return e.code_point < c; });
  return it != end && it->code_point == cp ? it->rank : 0;
}

void append_decomposition(char32_t cp, std::u32string& out) {
  if (is_syllable(cp)) {
    const char32_t index = cp - kSyllableBase;
    out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
    out.push_back(kVowelBase + (index % (kVowelCount * kTrailCount)) / kTrailCount);
    if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
    return;
  }
  const Decomposition* end = kDecompositions + kDecompositionCount;
  const Decomposition* it =
      std::lower_bound(kDecompositions, end, cp, [](const Decomposition& e, char32_t c) { return e.code_point < c; });
  if (it != end && it->code_point == cp) {
    out.append(kDecompositionPool + it->offset, it->length);
  } else {
    out.push_back(cp);
  }
}

// Zero when the pair does not compose.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLeadBase && first < kLeadBase + kLeadCount && second >= kVowelBase &&
      second < kVowelBase + kVowelCount) {
    return kSyllableBase + ((first - kLeadBase) * kVowelCount + (second - kVowelBase)) * kTrailCount;
  }
  if (is_syllable(first) && (first - kSyllableBase) % kTrailCount == 0 && second > kTrailBase &&
      second < kTrailBase + kTrailCount) {
    return first + (second - kTrailBase);
  }
  const Composition* end = kCompositions + kCompositionCount;
  const Composition* it =
      std::lower_bound(kCompositions, end, std::make_pair(first, second),
                       [](const Composition& e, const std::pair<char32_t, char32_t>& key) {
                         return e.first < key.first || (e.first == key.first && e.second < key.second);
                       });
  return it != end && it->first == first && it->second == second ? it->composite : 0;
}

// Stable sort of every run of non-starters by combining class.
void reorder_marks(std::u32string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (combining_rank(text[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && combining_rank(text[end]) != 0) ++end;
    std::stable_sort(text.begin() + i, text.begin() + end,
                     [](char32_t a, char32_t b) { return combining_rank(a) < combining_rank(b); });
    i = end;
  }
}

// The canonical composition algorithm of UAX #15, in place.
void compose_in_place(std::u32string& text) {
  if (text.empty()) return;
  std::size_t starter = 0;
  int last_rank = combining_rank(text[0]) == 0 ? 0 : 256;  // a leading mark has no starter to compose with
  std::size_t write = 1;
  for (std::size_t read = 1; read < text.size(); ++read) {
    const char32_t cp = text[read];
    const int rank = combining_rank(cp);
    const char32_t composite = compose(text[starter], cp);
    if (composite != 0 && (last_rank < rank || last_rank == 0)) {
      text[starter] = composite;
      continue;
    }
    if (rank == 0) starter = write;
    last_rank = rank;
    text[write++] = cp;
  }
  text.resize(write);
}

}  // namespace

std::u32string normalize(const std::u32string& text) {
  if (std::all_of(text.begin(), text.end(), [](char32_t cp) { return cp < 0xA0; })) return text;  // NFKC-stable
  std::u32string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_decomposition(cp, out);
  reorder_marks(out);
  compose_in_place(out);
  return out;
}

}  // namespace relmem::nfkc
