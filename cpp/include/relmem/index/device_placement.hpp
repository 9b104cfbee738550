#pragma once
// Where a VectorIndex keeps its vectors: on the CPU in fp32, fp16 or int8, or on a CUDA device in fp32, fp16 or bf16.
#include <string>

#include "relmem/device/precision.hpp"
#include "relmem/index/row_store.hpp"

namespace relmem {

struct DevicePlacement {
  int cuda_device = -1;  // -1: the CPU
  gpu::Precision precision = gpu::Precision::FP32;  // on cuda
  RowType row_type = RowType::FP32;                 // on the CPU
};

// device: "cpu", "cuda" or "cuda:N"; dtype: "fp32", "fp16", "int8" (cpu) or "bf16" (cuda). Throws relmem::Error for
// unknown names, for a dtype the device does not store, and for a CUDA device this process cannot use (relmem
// built without CUDA, no driver or GPU, no such device), saying which.
DevicePlacement resolve_device_placement(const std::string& device, const std::string& dtype);

}  // namespace relmem
