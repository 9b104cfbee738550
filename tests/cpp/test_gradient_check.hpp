#pragma once
// Gradient checks for the backward passes: random double-precision inputs, and analytic gradients against central
// finite differences.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "relmem/encoders/finetuning/transformer_backprop.hpp"

namespace relmem_test {

using MatrixD = relmem::backprop::Matrix<double>;

inline MatrixD random_matrix(int rows, int cols, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  MatrixD m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

inline std::vector<double> random_vector(int64_t size, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> v(static_cast<size_t>(size));
  for (double& x : v) x = normal(rng);
  return v;
}

// Checks d(loss)/d(values[i]) for every i against central differences; `loss` reads the values.
inline void expect_gradient(const std::function<double()>& loss, double* values, int64_t count,
                            const double* analytic, const std::string& what) {
  omp_set_num_threads(1);  // tiny sizes: thread start-up would dominate the thousands of loss evaluations
  constexpr double kStep = 1e-6;
  int nonzero = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double original = values[i];
    values[i] = original + kStep;
    const double plus = loss();
    values[i] = original - kStep;
    const double minus = loss();
    values[i] = original;
    const double numeric = (plus - minus) / (2 * kStep);
    EXPECT_NEAR(analytic[i], numeric, 1e-6 + 1e-5 * std::fabs(numeric)) << what << " entry " << i;
    nonzero += std::fabs(analytic[i]) > 1e-9 ? 1 : 0;
  }
  EXPECT_GT(nonzero, count / 2) << what << ": the check is vacuous";
}

}  // namespace relmem_test
