#include "relmem/index/row_store.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "relmem/common.hpp"
#include "relmem/device/precision.hpp"

namespace relmem {

RowType parse_row_type(const std::string& name) {
  if (name == "fp32") return RowType::FP32;
  if (name == "fp16") return RowType::FP16;
  if (name == "int8") return RowType::INT8;
  throw Error("unknown vector dtype '" + name + "' for the CPU (use 'fp32', 'fp16' or 'int8')");
}

std::string row_type_name(RowType type) {
  switch (type) {
    case RowType::FP16: return "fp16";
    case RowType::INT8: return "int8";
    default: return "fp32";
  }
}

namespace {

// Eight halves at a time by the F16C instruction, which a portable (x86-64-v2) build may not assume.
__attribute__((target("avx,f16c"))) void halves_to_floats_f16c(const uint16_t* half, int n, float* out) {
  int j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(half + j))));
  for (; j < n; ++j) out[j] = gpu::half_bits_to_float(half[j]);
}

// Widening fp16 rows one value at a time (an out-of-line call each) made a 64-query batch of 100,000 x 512 fp16
// rows 2.6x slower than the same batch of fp32 rows.
void halves_to_floats(const uint16_t* half, int n, float* out) {
  static const bool f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  if (f16c) return halves_to_floats_f16c(half, n, out);
  for (int j = 0; j < n; ++j) out[j] = gpu::half_bits_to_float(half[j]);
}

}  // namespace

size_t bytes_per_value(RowType type) {
  switch (type) {
    case RowType::FP16: return 2;
    case RowType::INT8: return 1;
    default: return 4;
  }
}

void RowsView::decode(int64_t r, float* out) const {
  const uint8_t* codes = row(r);
  switch (type) {
    case RowType::FP32:
      std::memcpy(out, codes, row_bytes());
      break;
    case RowType::FP16:
      halves_to_floats(reinterpret_cast<const uint16_t*>(codes), dim, out);
      break;
    case RowType::INT8: {
      const auto* int8 = reinterpret_cast<const int8_t*>(codes);
      const float scale = scales[r];
      for (int j = 0; j < dim; ++j) out[j] = static_cast<float>(int8[j]) * scale;
      break;
    }
  }
}

float RowsView::dot(int64_t r, const float* query) const {
  const uint8_t* codes = row(r);
  float sum = 0.0f;
  switch (type) {
    case RowType::FP32:
      return Eigen::Map<const Eigen::VectorXf>(reinterpret_cast<const float*>(codes), dim)
          .dot(Eigen::Map<const Eigen::VectorXf>(query, dim));
    case RowType::FP16: {
      const auto* half = reinterpret_cast<const uint16_t*>(codes);
      for (int j = 0; j < dim; ++j) sum += gpu::half_bits_to_float(half[j]) * query[j];
      return sum;
    }
    case RowType::INT8: {
      const auto* int8 = reinterpret_cast<const int8_t*>(codes);
      for (int j = 0; j < dim; ++j) sum += static_cast<float>(int8[j]) * query[j];
      return sum * scales[r];
    }
  }
  return sum;
}

RowStore::RowStore(int dim, RowType type) : dim_(dim), type_(type) {}

void RowStore::append(const float* rows, int64_t n) {
  own();
  const size_t row_bytes = view().row_bytes();
  const size_t old_bytes = static_cast<size_t>(rows_) * row_bytes;
  owned_codes_.resize(old_bytes + static_cast<size_t>(n) * row_bytes);
  uint8_t* out = owned_codes_.data() + old_bytes;
  for (int64_t i = 0; i < n; ++i, out += row_bytes) {
    const float* row = rows + i * dim_;
    if (type_ == RowType::FP32) {
      std::memcpy(out, row, row_bytes);
    } else if (type_ == RowType::FP16) {
      auto* half = reinterpret_cast<uint16_t*>(out);
      for (int j = 0; j < dim_; ++j) half[j] = gpu::float_to_half_bits(row[j]);
    } else {
      float largest = 0.0f;
      for (int j = 0; j < dim_; ++j) largest = std::max(largest, std::fabs(row[j]));
      const float inverse = largest > 0.0f ? 127.0f / largest : 0.0f;
      auto* int8 = reinterpret_cast<int8_t*>(out);
      for (int j = 0; j < dim_; ++j) int8[j] = static_cast<int8_t>(std::lrint(row[j] * inverse));
      owned_scales_.push_back(largest / 127.0f);
    }
  }
  rows_ += n;
  point_at_owned();
}

void RowStore::copy_row(int64_t from, int64_t to) {
  own();
  const size_t row_bytes = view().row_bytes();
  std::memmove(owned_codes_.data() + to * row_bytes, owned_codes_.data() + from * row_bytes, row_bytes);
  if (type_ == RowType::INT8) owned_scales_[static_cast<size_t>(to)] = owned_scales_[static_cast<size_t>(from)];
}

void RowStore::pop_back() {
  own();
  --rows_;
  owned_codes_.resize(static_cast<size_t>(rows_) * view().row_bytes());
  if (type_ == RowType::INT8) owned_scales_.pop_back();
  point_at_owned();
}

void RowStore::attach(std::shared_ptr<const void> keep_alive, const uint8_t* codes, const float* scales, int64_t rows) {
  owned_codes_ = {};
  owned_scales_ = {};
  mapping_ = std::move(keep_alive);
  codes_ = codes;
  scales_ = scales;
  rows_ = rows;
}

void RowStore::assign(AlignedBytes codes, std::vector<float> scales, int64_t rows) {
  mapping_.reset();
  owned_codes_ = std::move(codes);
  owned_scales_ = std::move(scales);
  rows_ = rows;
  point_at_owned();
}

void RowStore::own() {
  if (!mapping_) return;
  owned_codes_.assign(codes_, codes_ + code_bytes());
  if (type_ == RowType::INT8) owned_scales_.assign(scales_, scales_ + rows_);
  mapping_.reset();
  point_at_owned();
}

void RowStore::point_at_owned() {
  codes_ = owned_codes_.data();
  scales_ = owned_scales_.data();
}

}  // namespace relmem
