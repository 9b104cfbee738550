#pragma once
// Seeded random vectors for the index and GEMM tests.
#include <random>

#include "relmem/common.hpp"

namespace relmem_test {

// rows x cols standard normal values.
inline relmem::RowMatrix random_matrix(int64_t rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  relmem::RowMatrix m(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = normal(rng);
  return m;
}

// The same, each row scaled to unit length.
inline relmem::RowMatrix random_unit_rows(int64_t rows, int cols, unsigned seed) {
  relmem::RowMatrix m = random_matrix(rows, cols, seed);
  m.rowwise().normalize();
  return m;
}

}  // namespace relmem_test
