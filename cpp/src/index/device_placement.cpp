#include "relmem/index/device_placement.hpp"

#include "relmem/common.hpp"
#include "relmem/device/cuda_device.hpp"

namespace relmem {

DevicePlacement resolve_device_placement(const std::string& device, const std::string& dtype) {
  DevicePlacement placement;
  if (device != "cpu") placement.cuda_device = gpu::parse_cuda_device(device);
  if (placement.cuda_device < 0) {
    if (dtype == "bf16") throw Error("dtype 'bf16' needs device='cuda': a VectorIndex on the CPU stores fp32, fp16 or int8");
    placement.row_type = parse_row_type(dtype);
    return placement;
  }
  if (dtype == "int8") throw Error("dtype 'int8' is for device='cpu': a VectorIndex on cuda stores fp32, fp16 or bf16");
  placement.precision = gpu::parse_precision(dtype);
  try {
    gpu::require_cuda_device(placement.cuda_device);
  } catch (const Error& error) {
    throw Error("cannot place a VectorIndex on " + device + ": " + error.what());
  }
  return placement;
}

}  // namespace relmem
