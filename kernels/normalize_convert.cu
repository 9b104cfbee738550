// Launchers of the conversion kernels (normalize_convert.cuh).
// Reference: normalize_convert_reference (cpp/src/index/gpu/reference_kernels.cpp).
#include "kernel_launch.hpp"
#include "normalize_convert.cuh"

namespace relmem::gpu::kernels {
namespace {

int grid_for(int64_t items, int block) {
  const int64_t blocks = (items + block - 1) / block;
  return static_cast<int>(blocks < 65536 ? blocks : 65536);
}

}  // namespace

cudaError_t normalize_convert(const float* in, int64_t n, int dim, bool normalize, Precision precision,
                              void* out, int64_t out_ld, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if ((n + kRowsPerBlock - 1) / kRowsPerBlock > 0x7FFFFFFF) return cudaErrorInvalidValue;
  return dispatch_precision(precision, [&](auto element) {
    using Element = decltype(element);
    const unsigned blocks = static_cast<unsigned>((n + kRowsPerBlock - 1) / kRowsPerBlock);
    normalize_convert_kernel<Element><<<blocks, kRowsPerBlock * 32, 0, stream>>>(
        in, n, dim, normalize, static_cast<Element*>(out), out_ld);
    return cudaGetLastError();
  });
}

cudaError_t widen_rows(const void* stored, int64_t n, int64_t ld, int dim, Precision precision, float* out,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_precision(precision, [&](auto element) {
    using Element = decltype(element);
    widen_rows_kernel<Element><<<grid_for(n * dim, 256), 256, 0, stream>>>(static_cast<const Element*>(stored),
                                                                          n, ld, dim, out);
    return cudaGetLastError();
  });
}

cudaError_t gather_rows(const void* src, const int64_t* rows, int64_t n, int64_t row_bytes, void* dst,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (row_bytes % 16 != 0 || n > 0x7FFFFFFF) return cudaErrorInvalidValue;
  gather_rows_kernel<<<static_cast<unsigned>(n), 128, 0, stream>>>(
      static_cast<const uint4*>(src), rows, row_bytes / 16, static_cast<uint4*>(dst));
  return cudaGetLastError();
}

}  // namespace relmem::gpu::kernels
