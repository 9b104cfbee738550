// Launcher of the fused scoring + top-k kernel (topk_fused.cuh).
// Reference: fused_topk_reference (cpp/src/index/gpu/reference_kernels.cpp).
#include "kernel_launch.hpp"
#include "topk_fused.cuh"

namespace relmem::gpu::kernels {
namespace {

template <typename Element, bool kTensorCores>
cudaError_t launch_fused(const FusedParams& p, dim3 grid, cudaStream_t stream) {
  const size_t shared = fused_shared_layout<Element, kTensorCores>(p.group, p.list_length).total;
  const cudaError_t status = cudaFuncSetAttribute(fused_topk_kernel<Element, kTensorCores>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(shared));
  if (status != cudaSuccess) return status;
  fused_topk_kernel<Element, kTensorCores><<<grid, kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fused_topk(const FusedTopkArgs& args, Precision precision, bool tensor_cores, cudaStream_t stream) {
  if (args.n_queries == 0 || args.row_end <= args.row_begin) return cudaSuccess;
  if (args.k < 1 || args.k > 1024 || args.n_splits < 1 || args.n_splits > 65535 || args.ld % 8 != 0 ||
      args.row_end > 0xFFFFFFFFll) {
    return cudaErrorInvalidValue;
  }
  const SelectLayout layout = select_layout(args.k);
  const int64_t rows = args.row_end - args.row_begin;
  const int64_t per_split = (rows + args.n_splits - 1) / args.n_splits;
  FusedParams p;
  p.queries = args.queries;
  p.n_queries = args.n_queries;
  p.rows = args.rows;
  p.ld = args.ld;
  p.row_begin = args.row_begin;
  p.row_end = args.row_end;
  p.rows_per_split = (per_split + kTileRows - 1) / kTileRows * kTileRows;
  p.mask = args.mask;
  p.k = args.k;
  p.list_length = layout.list_length;
  p.group = layout.group;
  p.n_splits = args.n_splits;
  p.partial = args.partial;
  const int64_t groups = (args.n_queries + layout.group - 1) / layout.group;
  if (groups > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(args.n_splits));
  switch (precision) {
    case Precision::FP32: return launch_fused<float, false>(p, grid, stream);
    case Precision::FP16:
      return tensor_cores ? launch_fused<__half, true>(p, grid, stream) : launch_fused<__half, false>(p, grid, stream);
    case Precision::BF16:
      return tensor_cores ? launch_fused<__nv_bfloat16, true>(p, grid, stream)
                          : launch_fused<__nv_bfloat16, false>(p, grid, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace relmem::gpu::kernels
