#pragma once
// Where a VectorIndex keeps its vectors: on the CPU in fp32, or on a CUDA device in fp32, fp16 or bf16.
#include <string>

#include "relmem/index/gpu/precision.hpp"

namespace relmem {

struct DevicePlacement {
  int cuda_device = -1;  // -1: the CPU
  gpu::Precision precision = gpu::Precision::FP32;
};

// device: "cpu", "cuda" or "cuda:N"; dtype: "fp32", "fp16" or "bf16". Throws relmem::Error for unknown
// names, for a dtype other than fp32 on the CPU, and for a CUDA device this process cannot use (relmem
// built without CUDA, no driver or GPU, no such device), saying which.
DevicePlacement resolve_device_placement(const std::string& device, const std::string& dtype);

}  // namespace relmem
