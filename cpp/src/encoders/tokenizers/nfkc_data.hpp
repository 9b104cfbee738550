#pragma once
// Unicode NFKC tables as node's ICU implements them; the data lives in the generated nfkc_data.cpp.
#include <cstddef>
#include <cstdint>

namespace relmem::nfkc {

// Full compatibility decomposition of one code point: kDecompositionPool[offset, offset + length).
struct Decomposition {
  char32_t code_point;
  uint32_t offset;
  uint32_t length;
};

// Canonical combining classes as order-preserving ranks (0, the starters, is left out).
struct CombiningRank {
  char32_t code_point;
  uint16_t rank;
};

// Primary composite: first + second compose to composite.
struct Composition {
  char32_t first;
  char32_t second;
  char32_t composite;
};

// All sorted: decompositions and ranks by code point, compositions by (first, second).
extern const Decomposition kDecompositions[];
extern const std::size_t kDecompositionCount;
extern const char32_t kDecompositionPool[];
extern const CombiningRank kCombiningRanks[];
extern const std::size_t kCombiningRankCount;
extern const Composition kCompositions[];
extern const std::size_t kCompositionCount;

}  // namespace relmem::nfkc
