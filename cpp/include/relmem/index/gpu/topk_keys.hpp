#pragma once
// Top-k candidates as single 64-bit keys, shared by the CUDA kernels and their CPU references.
// High 32 bits: the score's bits mapped so that unsigned order equals float order; low 32 bits:
// ~row, so that among equal scores the lower row ranks first. Larger key = better candidate, and
// key 0 ranks below every real candidate (even a score of -inf), so it marks padding.
// This header is compiled by nvcc as well: keep it free of Eigen and of the standard library.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define RELMEM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RELMEM_HOST_DEVICE inline
#endif

namespace relmem::gpu {

constexpr uint64_t kPaddingKey = 0;

RELMEM_HOST_DEVICE uint32_t ordered_score_bits(float score) {
  uint32_t bits;
  memcpy(&bits, &score, sizeof bits);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

RELMEM_HOST_DEVICE uint64_t make_topk_key(float score, uint32_t row) {
  return (static_cast<uint64_t>(ordered_score_bits(score)) << 32) | static_cast<uint64_t>(~row);
}

RELMEM_HOST_DEVICE float topk_key_score(uint64_t key) {
  const uint32_t ordered = static_cast<uint32_t>(key >> 32);
  const uint32_t bits = (ordered & 0x80000000u) ? (ordered & 0x7FFFFFFFu) : ~ordered;
  float score;
  memcpy(&score, &bits, sizeof score);
  return score;
}

RELMEM_HOST_DEVICE uint32_t topk_key_row(uint64_t key) { return ~static_cast<uint32_t>(key); }

// Scores and rows of n keys; padding becomes (-inf, -1).
inline void decode_topk_keys(const uint64_t* keys, int64_t n, float* scores, int64_t* rows) {
  for (int64_t i = 0; i < n; ++i) {
    const bool padding = keys[i] == kPaddingKey;
    scores[i] = padding ? -__builtin_inff() : topk_key_score(keys[i]);
    rows[i] = padding ? -1 : static_cast<int64_t>(topk_key_row(keys[i]));
  }
}

}  // namespace relmem::gpu
