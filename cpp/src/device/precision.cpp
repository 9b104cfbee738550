#include "relmem/device/precision.hpp"

#include <cfloat>
#include <cmath>
#include <cstring>

#include "relmem/common.hpp"

namespace relmem::gpu {
namespace {

uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Drops the low `shift` bits of `value`, rounding to nearest with ties to even.
uint32_t shift_right_round_even(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

}  // namespace

Precision parse_precision(const std::string& name) {
  if (name == "fp32" || name == "float32") return Precision::FP32;
  if (name == "fp16" || name == "float16") return Precision::FP16;
  if (name == "bf16" || name == "bfloat16") return Precision::BF16;
  throw Error("unknown vector dtype '" + name + "' (expected fp32, fp16 or bf16)");
}

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
  }
  throw Error("invalid precision value");
}

int bytes_per_element(Precision precision) { return precision == Precision::FP32 ? 4 : 2; }

uint16_t float_to_half_bits(float value) {
  const uint32_t bits = float_bits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return sign | 0x7E00u;   // NaN
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // rounds past 65504: infinity
  if (magnitude >= 0x38800000u) {                       // normal half: rebias the exponent by 127 - 15
    return sign | static_cast<uint16_t>(shift_right_round_even(magnitude - 0x38000000u, 13));
  }
  if (magnitude < 0x33000000u) return sign;  // below 2^-25 (2^-25 itself ties to even zero)
  // Subnormal half: value = m * 2^-24 with m = mantissa(with hidden bit) >> (126 - exponent).
  const int exponent = static_cast<int>(magnitude >> 23);
  const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
  return sign | static_cast<uint16_t>(shift_right_round_even(mantissa, 126 - exponent));
}

float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7F800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_bfloat16_bits(float value) {
  const uint32_t bits = float_bits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

float bfloat16_bits_to_float(uint16_t bits) { return bits_float(static_cast<uint32_t>(bits) << 16); }

float round_to_precision(float value, Precision precision) {
  switch (precision) {
    case Precision::FP32: return value;
    case Precision::FP16: return half_bits_to_float(float_to_half_bits(value));
    case Precision::BF16: return bfloat16_bits_to_float(float_to_bfloat16_bits(value));
  }
  throw Error("invalid precision value");
}

float max_finite(Precision precision) {
  switch (precision) {
    case Precision::FP32: return FLT_MAX;
    case Precision::FP16: return 65504.0f;
    case Precision::BF16: return bfloat16_bits_to_float(0x7F7Fu);
  }
  throw Error("invalid precision value");
}

}  // namespace relmem::gpu
