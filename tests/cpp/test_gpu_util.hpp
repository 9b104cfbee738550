#pragma once
// Helpers shared by the GPU index tests: random data, precision tolerances, top-k comparison up to ties, GPU skipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "relmem/common.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/device/precision.hpp"
#include "test_random_rows.hpp"

namespace relmem_test {

// Scores stored in `precision` stay within this of fp32 ones, for unit vectors.
inline float tolerance_of(relmem::gpu::Precision precision) {
  switch (precision) {
    case relmem::gpu::Precision::FP32: return 1e-4f;
    case relmem::gpu::Precision::FP16: return 4e-3f;
    case relmem::gpu::Precision::BF16: return 3e-2f;
  }
  return 0;
}

// Same top-k up to `tolerance`: scores agree rank by rank, and an id found in one list but not the
// other must sit at the boundary (its score within tolerance of the k-th score), i.e. be a near-tie.
inline void expect_same_topk(const float* expected_scores, const int64_t* expected_ids, const float* scores,
                             const int64_t* ids, int64_t n_queries, int k, float tolerance, const std::string& what) {
  int64_t failures = 0;
  for (int64_t q = 0; q < n_queries && failures < 5; ++q) {
    const float* es = expected_scores + q * k;
    const float* gs = scores + q * k;
    const std::set<int64_t> expected_set(expected_ids + q * k, expected_ids + (q + 1) * k);
    float boundary = es[0];
    for (int j = 0; j < k; ++j) {
      if (expected_ids[q * k + j] >= 0) boundary = std::min(boundary, es[j]);
    }
    for (int j = 0; j < k; ++j) {
      const bool both_padding = expected_ids[q * k + j] < 0 && ids[q * k + j] < 0;
      if (!both_padding && !(std::abs(es[j] - gs[j]) <= tolerance)) {
        ADD_FAILURE() << what << ": query " << q << " rank " << j << " score " << gs[j] << " expected " << es[j];
        ++failures;
      }
      if (ids[q * k + j] >= 0 && !expected_set.count(ids[q * k + j]) && !(gs[j] <= boundary + tolerance)) {
        ADD_FAILURE() << what << ": query " << q << " rank " << j << " id " << ids[q * k + j]
                      << " is not in the expected top-k and not a near-tie (score " << gs[j] << ")";
        ++failures;
      }
    }
    const std::set<int64_t> got_set(ids + q * k, ids + (q + 1) * k);
    if (got_set.size() != expected_set.size()) {
      ADD_FAILURE() << what << ": query " << q << " has " << got_set.size() << " distinct ids, expected "
                    << expected_set.size();
      ++failures;
    }
  }
}

inline bool have_gpu() { return relmem::gpu::cuda_device_count() > 0; }

}  // namespace relmem_test

#define RELMEM_SKIP_WITHOUT_GPU()                                       \
  do {                                                                  \
    std::string why;                                                    \
    if (relmem::gpu::cuda_device_count(&why) == 0) GTEST_SKIP() << why; \
  } while (0)
