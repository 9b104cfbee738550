#pragma once
// Storage precision of a GPU vector index, and a bit-exact CPU emulation of the device's
// float -> fp16 / bf16 conversion (round to nearest, ties to even) used by the CPU references.
#include <cstdint>
#include <string>

namespace relmem::gpu {

enum class Precision { FP32, FP16, BF16 };

// "fp32", "fp16" or "bf16"; anything else is a relmem::Error.
Precision parse_precision(const std::string& name);
std::string precision_name(Precision precision);
int bytes_per_element(Precision precision);

uint16_t float_to_half_bits(float value);
float half_bits_to_float(uint16_t bits);
uint16_t float_to_bfloat16_bits(float value);
float bfloat16_bits_to_float(uint16_t bits);

// The float the device ends up holding after storing `value` in `precision`.
float round_to_precision(float value, Precision precision);

// Largest finite magnitude of the precision (values beyond it would become infinite).
float max_finite(Precision precision);

}  // namespace relmem::gpu
