// Device discovery for builds with CUDA (cpp/src/index/gpu/cuda_unavailable.cpp is the other build).
#include <cuda_runtime.h>

#include "cuda_resources.hpp"
#include "relmem/device/cuda_device.hpp"

namespace relmem::gpu {

bool built_with_cuda() { return true; }

int cuda_device_count(std::string* why_none) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    if (why_none) {
      *why_none = std::string("no usable CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(status) +
                  " (" + cudaGetErrorString(status) + "); is an NVIDIA GPU with its driver present?";
    }
    return 0;
  }
  if (count == 0 && why_none) *why_none = "no CUDA device found";
  return count;
}

void require_cuda_device(int device) {
  std::string why_none;
  const int count = cuda_device_count(&why_none);
  if (count == 0) throw Error(why_none);
  if (device < 0 || device >= count) {
    throw Error("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                " device(s) found)");
  }
}

CudaDeviceInfo cuda_device_info(int device) {
  require_cuda_device(device);
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, device), "reading device properties");
  int memory_clock_khz = 0;
  int sm_clock_khz = 0;
  check_cuda(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device), "reading the memory clock");
  check_cuda(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device), "reading the SM clock");
  CudaDeviceInfo info;
  info.device = device;
  info.name = properties.name;
  info.compute_capability_major = properties.major;
  info.compute_capability_minor = properties.minor;
  info.multiprocessors = properties.multiProcessorCount;
  info.memory_bytes = static_cast<int64_t>(properties.totalGlobalMem);
  // Double data rate: two transfers per memory clock over a bus of memoryBusWidth bits.
  info.peak_memory_bandwidth_gbs = 2.0 * memory_clock_khz * 1e3 * (properties.memoryBusWidth / 8.0) / 1e9;
  info.sm_clock_mhz = sm_clock_khz / 1e3;
  return info;
}

}  // namespace relmem::gpu
