// Device discovery in a build without nvcc: no device, and a clear reason. When relmem is built with CUDA
// (RELMEM_HAVE_CUDA), kernels/cuda_device.cpp defines these functions instead.
#ifndef RELMEM_HAVE_CUDA

#include "relmem/common.hpp"
#include "relmem/device/cuda_device.hpp"

namespace relmem::gpu {

bool built_with_cuda() { return false; }

int cuda_device_count(std::string* why_none) {
  if (why_none) *why_none = kCudaNotBuilt;
  return 0;
}

CudaDeviceInfo cuda_device_info(int /*device*/) { throw Error(kCudaNotBuilt); }

void require_cuda_device(int /*device*/) { throw Error(kCudaNotBuilt); }

}  // namespace relmem::gpu

#endif
