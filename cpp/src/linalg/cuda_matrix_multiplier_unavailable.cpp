// The cuBLAS matrix multiplier of a build without nvcc reports that, clearly, instead of failing to link. When
// relmem is built with CUDA (RELMEM_HAVE_CUDA), kernels/cuda_matrix_multiplier.cpp defines it instead.
#ifndef RELMEM_HAVE_CUDA

#include "relmem/common.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/linalg/matrix_multiplier.hpp"

namespace relmem::gpu {

std::unique_ptr<MatrixMultiplier> make_cuda_matrix_multiplier(int /*device*/) { throw Error(kCudaNotBuilt); }

}  // namespace relmem::gpu

#endif
