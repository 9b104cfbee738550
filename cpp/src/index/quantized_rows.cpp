#include "relmem/index/quantized_rows.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <string>

#include "relmem/common.hpp"
#include "relmem/index/topk.hpp"

namespace relmem {
namespace {

constexpr int kLanes = 32;  // codes per SIMD step; rows are padded to a multiple

using DotFn = void (*)(const int8_t* codes, int64_t rows, int stride, const int16_t* query, int32_t* out);

void dots_portable(const int8_t* codes, int64_t rows, int stride, const int16_t* query, int32_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* row = codes + r * stride;
    int32_t sum = 0;
    for (int j = 0; j < stride; ++j) sum += static_cast<int32_t>(row[j]) * query[j];
    out[r] = sum;
  }
}

__attribute__((target("avx2"))) void dots_avx2(const int8_t* codes, int64_t rows, int stride, const int16_t* query,
                                               int32_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* row = codes + r * stride;
    __m256i acc = _mm256_setzero_si256();
    for (int j = 0; j < stride; j += 16) {
      const __m256i c = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + j)));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(query + j))));
    }
    const __m128i half = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    const __m128i quarter = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0x4E));
    out[r] = _mm_cvtsi128_si32(_mm_add_epi32(quarter, _mm_shuffle_epi32(quarter, 0xB1)));
  }
}

__attribute__((target("avx512f,avx512bw"))) void dots_avx512(const int8_t* codes, int64_t rows, int stride,
                                                             const int16_t* query, int32_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* row = codes + r * stride;
    _mm_prefetch(reinterpret_cast<const char*>(row + 8 * stride), _MM_HINT_T0);
    __m512i acc = _mm512_setzero_si512();
    for (int j = 0; j < stride; j += kLanes) {
      const __m512i c = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j)));
      acc = _mm512_add_epi32(acc, _mm512_madd_epi16(c, _mm512_loadu_si512(query + j)));
    }
    const __m256i half = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
    const __m128i quarter = _mm_add_epi32(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
    const __m128i eighth = _mm_add_epi32(quarter, _mm_shuffle_epi32(quarter, 0x4E));
    out[r] = _mm_cvtsi128_si32(_mm_add_epi32(eighth, _mm_shuffle_epi32(eighth, 0xB1)));
  }
}

DotFn best_dots() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return dots_avx512;
  if (__builtin_cpu_supports("avx2")) return dots_avx2;
  return dots_portable;
}

// Codes of `values` scaled so that the largest |value| maps to `limit`; returns the scale (value = code * scale).
template <typename Code>
float quantize_into(const float* values, int n, int limit, Code* codes) {
  float largest = 0.0f;
  for (int j = 0; j < n; ++j) largest = std::max(largest, std::fabs(values[j]));
  if (!std::isfinite(largest)) throw Error("quantized rows: values must be finite");
  if (largest == 0.0f) {
    std::fill(codes, codes + n, Code{0});
    return 0.0f;
  }
  const float inverse = static_cast<float>(limit) / largest;
  for (int j = 0; j < n; ++j) codes[j] = static_cast<Code>(std::lrint(values[j] * inverse));
  return largest / static_cast<float>(limit);
}

}  // namespace

QuantizedRows::QuantizedRows(int dim) : dim_(dim), stride_((dim + kLanes - 1) / kLanes * kLanes) {
  if (dim < 1) throw Error("quantized rows need a positive dimension");
}

void QuantizedRows::add(int64_t id, const float* row) {
  std::vector<int8_t> codes(static_cast<size_t>(stride_), 0);
  const float scale = quantize_into(row, dim_, 127, codes.data());
  auto it = row_of_id_.find(id);
  int64_t index;
  if (it != row_of_id_.end()) {
    index = it->second;
  } else {
    index = size();
    ids_.push_back(id);
    scales_.push_back(0.0f);
    codes_.resize(codes_.size() + static_cast<size_t>(stride_));
    row_of_id_[id] = index;
  }
  std::copy(codes.begin(), codes.end(), codes_.begin() + index * stride_);
  scales_[static_cast<size_t>(index)] = scale;
}

bool QuantizedRows::remove(int64_t id) {
  auto it = row_of_id_.find(id);
  if (it == row_of_id_.end()) return false;
  const int64_t index = it->second, last = size() - 1;
  if (index != last) {
    std::copy(codes_.begin() + last * stride_, codes_.begin() + (last + 1) * stride_, codes_.begin() + index * stride_);
    scales_[static_cast<size_t>(index)] = scales_[static_cast<size_t>(last)];
    ids_[static_cast<size_t>(index)] = ids_[static_cast<size_t>(last)];
    row_of_id_[ids_[static_cast<size_t>(index)]] = index;
  }
  ids_.pop_back();
  scales_.pop_back();
  codes_.resize(codes_.size() - static_cast<size_t>(stride_));
  row_of_id_.erase(it);
  return true;
}

QuantizedRows::Query QuantizedRows::quantize(const float* query) const {
  Query q;
  q.codes.assign(static_cast<size_t>(stride_), 0);
  // Small enough that a row's integer total (at most stride_ x 127 x limit) fits in int32.
  const int limit = static_cast<int>(std::min<int64_t>(16383, INT32_MAX / (int64_t{127} * stride_)));
  q.scale = quantize_into(query, dim_, limit, q.codes.data());
  return q;
}

std::vector<int64_t> QuantizedRows::top(const float* query, int n) const {
  if (n < 1) throw Error("quantized rows: n must be >= 1");
  static const DotFn dots = best_dots();
  const Query q = quantize(query);
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (size() + kBlock - 1) / kBlock;
  // Each thread keeps the best of its blocks; the exact top n of their union is the same whatever the split.
  std::vector<std::vector<Scored>> kept_by(static_cast<size_t>(omp_get_max_threads()));
#pragma omp parallel if (blocks > 1)
  {
    std::vector<int32_t> block(static_cast<size_t>(kBlock));
    std::vector<Scored>& kept = kept_by[static_cast<size_t>(omp_get_thread_num())];
    float floor = -std::numeric_limits<float>::infinity();
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kBlock;
      const int64_t count = std::min(kBlock, size() - begin);
      dots(codes_.data() + begin * stride_, count, stride_, q.codes.data(), block.data());
      for (int64_t i = 0; i < count; ++i) {
        const float score = static_cast<float>(block[static_cast<size_t>(i)]) * scales_[static_cast<size_t>(begin + i)];
        if (score >= floor) kept.push_back({score, ids_[static_cast<size_t>(begin + i)]});
      }
      if (kept.size() > 2 * static_cast<size_t>(n)) {
        keep_top_k(kept, static_cast<size_t>(n));
        floor = kept.back().score;
      }
    }
  }
  std::vector<Scored> kept = std::move(kept_by[0]);
  for (size_t t = 1; t < kept_by.size(); ++t) kept.insert(kept.end(), kept_by[t].begin(), kept_by[t].end());
  keep_top_k(kept, static_cast<size_t>(n));
  std::vector<int64_t> out;
  out.reserve(kept.size());
  for (const auto& s : kept) out.push_back(s.id);
  return out;
}

float QuantizedRows::inner_product(int64_t id, const float* query) const {
  static const DotFn dots = best_dots();
  auto it = row_of_id_.find(id);
  if (it == row_of_id_.end()) throw Error("quantized rows: unknown id " + std::to_string(id));
  const Query q = quantize(query);
  int32_t dot = 0;
  dots(codes_.data() + it->second * stride_, 1, stride_, q.codes.data(), &dot);
  return static_cast<float>(dot) * scales_[static_cast<size_t>(it->second)] * q.scale;
}

}  // namespace relmem
