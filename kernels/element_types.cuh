#pragma once
// The three storage element types and their conversions to and from float (round to nearest even,
// as float_to_half_bits / float_to_bfloat16_bits emulate on the CPU).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "relmem/device/precision.hpp"

namespace relmem::gpu::kernels {

template <typename Element>
__device__ __forceinline__ Element from_float(float value);
template <>
__device__ __forceinline__ float from_float<float>(float value) { return value; }
template <>
__device__ __forceinline__ __half from_float<__half>(float value) { return __float2half_rn(value); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float value) { return __float2bfloat16_rn(value); }

__device__ __forceinline__ float to_float(float value) { return value; }
__device__ __forceinline__ float to_float(__half value) { return __half2float(value); }
__device__ __forceinline__ float to_float(__nv_bfloat16 value) { return __bfloat162float(value); }

// Calls f with a value of the element type of `precision` (its value is irrelevant; use decltype).
template <typename Function>
cudaError_t dispatch_precision(Precision precision, Function&& f) {
  switch (precision) {
    case Precision::FP32: return f(float{});
    case Precision::FP16: return f(__half{});
    case Precision::BF16: return f(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace relmem::gpu::kernels
