#pragma once
// Whether a CUDA device is usable, and what it is; safe to call in builds without CUDA.
#include <cstdint>
#include <string>

namespace relmem::gpu {

// What every CUDA entry point of a build without CUDA says.
inline constexpr const char* kCudaNotBuilt =
    "relmem was built without CUDA support (nvcc was not found at configure time, or RELMEM_WITH_CUDA=OFF)";

// True when relmem was compiled with the CUDA kernels.
bool built_with_cuda();

// Number of usable CUDA devices; 0 when none (or no CUDA build). `why_none`, when given, receives
// the reason there is none.
int cuda_device_count(std::string* why_none = nullptr);

struct CudaDeviceInfo {
  int device = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  int64_t memory_bytes = 0;
  double peak_memory_bandwidth_gbs = 0;  // from memory clock and bus width (DDR)
  double sm_clock_mhz = 0;
};

// Throws relmem::Error when the device does not exist.
CudaDeviceInfo cuda_device_info(int device);

// "cuda" -> 0, "cuda:N" -> N; anything else is a relmem::Error.
int parse_cuda_device(const std::string& device);

// Throws relmem::Error with the reason when `device` is not a usable CUDA device.
void require_cuda_device(int device);

}  // namespace relmem::gpu
