// The CUDA vector store of a build without nvcc reports that, clearly, instead of failing to link. When relmem is
// built with CUDA (RELMEM_HAVE_CUDA), kernels/ defines it instead.
#ifndef RELMEM_HAVE_CUDA

#include "relmem/common.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/index/gpu/vector_store.hpp"

namespace relmem::gpu {

std::unique_ptr<VectorStore> make_cuda_vector_store(int, Precision, bool, int) { throw Error(kCudaNotBuilt); }

}  // namespace relmem::gpu

#endif
