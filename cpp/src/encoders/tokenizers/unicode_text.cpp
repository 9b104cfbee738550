#include "unicode_text.hpp"

#include <algorithm>

namespace relmem::unicode {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Hangul syllables decompose algorithmically (Unicode 3.12) instead of through the table.
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr char32_t kVowelCount = 21, kTrailCount = 28, kHangulCount = 19 * kVowelCount * kTrailCount;

template <typename Entry>
const Entry* find_entry(const Entry* table, std::size_t count, char32_t code_point) {
  const Entry* end = table + count;
  const Entry* it = std::lower_bound(table, end, code_point,
                                     [](const Entry& e, char32_t cp) { return e.code_point < cp; });
  return it != end && it->code_point == code_point ? it : nullptr;
}

}  // namespace

std::u32string decode_utf8(const std::string& text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char lead = bytes[i];
    int length = 0;
    char32_t cp = 0;
    char32_t min_value = 0;
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2, cp = lead & 0x1F, min_value = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, cp = lead & 0x0F, min_value = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, cp = lead & 0x07, min_value = 0x10000;
    } else {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    int taken = 1;
    while (taken < length && i + taken < n && (bytes[i + taken] & 0xC0) == 0x80) {
      cp = (cp << 6) | (bytes[i + taken] & 0x3F);
      ++taken;
    }
    const bool valid = taken == length && cp >= min_value && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    out.push_back(valid ? cp : kReplacement);
    i += taken;
  }
  return out;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

CharClass char_class(char32_t cp) {
  const ClassRange* end = kClassRanges + kClassRangeCount;
  const ClassRange* it =
      std::upper_bound(kClassRanges, end, cp, [](char32_t value, const ClassRange& r) { return value < r.first; });
  if (it == kClassRanges) return CharClass::kOther;
  --it;
  return cp <= it->last ? static_cast<CharClass>(it->cls) : CharClass::kOther;
}

bool is_punctuation(char32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
    return true;
  }
  return char_class(cp) == CharClass::kPunctuation;
}

// The ranges of Hugging Face's fast tokenizer, which sentence-transformers runs: its last extension range starts at
// U+2B920, where the Python BertTokenizer's starts at U+2B820.
bool is_cjk_ideograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

void append_lower(char32_t cp, std::u32string& out) {
  const CaseMapping* mapping = find_entry(kLowerCase, kLowerCaseCount, cp);
  if (mapping == nullptr) {
    out.push_back(cp);
    return;
  }
  for (char32_t c : mapping->lower) {
    if (c != 0) out.push_back(c);
  }
}

void append_without_accents(char32_t cp, std::u32string& out) {
  if (cp >= kHangulBase && cp < kHangulBase + kHangulCount) {
    const char32_t index = cp - kHangulBase;
    out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
    out.push_back(kVowelBase + (index % (kVowelCount * kTrailCount)) / kTrailCount);
    if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
    return;
  }
  const Decomposition* decomposition = find_entry(kDecompositions, kDecompositionCount, cp);
  if (decomposition == nullptr) {
    if (char_class(cp) != CharClass::kNonspacingMark) out.push_back(cp);
    return;
  }
  for (char32_t c : decomposition->nfd) {
    if (c != 0 && char_class(c) != CharClass::kNonspacingMark) out.push_back(c);
  }
}

}  // namespace relmem::unicode
