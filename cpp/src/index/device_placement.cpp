#include "relmem/index/device_placement.hpp"

#include "relmem/common.hpp"
#include "relmem/index/gpu/cuda_device.hpp"

namespace relmem {

DevicePlacement resolve_device_placement(const std::string& device, const std::string& dtype) {
  DevicePlacement placement;
  if (device != "cpu") placement.cuda_device = gpu::parse_cuda_device(device);
  placement.precision = gpu::parse_precision(dtype);
  if (placement.cuda_device < 0) {
    if (placement.precision != gpu::Precision::FP32)
      throw Error("dtype '" + dtype + "' needs device='cuda': a VectorIndex on the CPU stores fp32");
    return placement;
  }
  try {
    gpu::require_cuda_device(placement.cuda_device);
  } catch (const Error& error) {
    throw Error("cannot place a VectorIndex on " + device + ": " + error.what());
  }
  return placement;
}

}  // namespace relmem
