// The CUDA entry points of a build without nvcc: they report that, clearly, instead of failing to link.
// When relmem is built with CUDA (RELMEM_HAVE_CUDA), kernels/ defines these functions instead.
#ifndef RELMEM_HAVE_CUDA

#include "relmem/common.hpp"
#include "relmem/index/gpu/cuda_device.hpp"
#include "relmem/index/gpu/vector_store.hpp"
#include "relmem/linalg/matrix_multiplier.hpp"

namespace relmem::gpu {
namespace {
constexpr const char* kNotBuilt =
    "relmem was built without CUDA support (nvcc was not found at configure time, or RELMEM_WITH_CUDA=OFF)";
}

bool built_with_cuda() { return false; }

int cuda_device_count(std::string* why_none) {
  if (why_none) *why_none = kNotBuilt;
  return 0;
}

CudaDeviceInfo cuda_device_info(int /*device*/) { throw Error(kNotBuilt); }

void require_cuda_device(int /*device*/) { throw Error(kNotBuilt); }

std::unique_ptr<VectorStore> make_cuda_vector_store(int, Precision, bool, int) { throw Error(kNotBuilt); }

std::unique_ptr<MatrixMultiplier> make_cuda_matrix_multiplier(int /*device*/) { throw Error(kNotBuilt); }

}  // namespace relmem::gpu

#endif
