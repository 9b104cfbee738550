#pragma once
// Unicode tables for the BERT basic tokenizer; the data lives in the generated unicode_data.cpp.
#include <cstddef>
#include <cstdint>

namespace relmem::unicode {

enum class CharClass : uint8_t { kOther, kWhitespace, kControl, kPunctuation, kNonspacingMark };

// Maximal runs of code points sharing a class other than kOther, sorted by first.
struct ClassRange {
  char32_t first;
  char32_t last;
  uint8_t cls;
};

// Full mappings of single code points, zero-padded; both tables sorted by code point.
struct CaseMapping {
  char32_t code_point;
  char32_t lower[2];
};
struct Decomposition {
  char32_t code_point;
  char32_t nfd[4];
};

extern const ClassRange kClassRanges[];
extern const std::size_t kClassRangeCount;
extern const CaseMapping kLowerCase[];
extern const std::size_t kLowerCaseCount;
extern const Decomposition kDecompositions[];
extern const std::size_t kDecompositionCount;

}  // namespace relmem::unicode
