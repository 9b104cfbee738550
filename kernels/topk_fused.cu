// Launcher of the fused scoring + top-k kernel (topk_fused.cuh).
// Reference: fused_topk_reference (cpp/src/index/gpu/reference_kernels.cpp).
#include <algorithm>

#include "kernel_launch.hpp"
#include "topk_fused.cuh"

namespace relmem::gpu::kernels {
namespace {

template <typename Element, bool kTensorCores>
size_t shared_bytes(const SelectLayout& layout, int group) {
  return fused_shared_layout<Element, kTensorCores>(layout, group).total;
}

template <typename Element, bool kTensorCores>
cudaError_t prepare(const SelectLayout& layout, int group, size_t& shared) {
  shared = shared_bytes<Element, kTensorCores>(layout, group);
  return cudaFuncSetAttribute(fused_topk_kernel<Element, kTensorCores>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(shared));
}

template <typename Element, bool kTensorCores>
cudaError_t launch(const FusedParams& p, dim3 grid, cudaStream_t stream) {
  size_t shared = 0;
  const cudaError_t status = prepare<Element, kTensorCores>(p.layout, p.group, shared);
  if (status != cudaSuccess) return status;
  fused_topk_kernel<Element, kTensorCores><<<grid, kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

template <typename Element, bool kTensorCores>
int resident(const SelectLayout& layout, int group) {
  size_t shared = 0;
  if (prepare<Element, kTensorCores>(layout, group, shared) != cudaSuccess) return 1;
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_topk_kernel<Element, kTensorCores>, kThreads,
                                                    shared) != cudaSuccess) {
    return 1;
  }
  return std::max(blocks, 1);
}

}  // namespace

int fused_group(int k, int64_t n_queries, Precision precision, int64_t ld, bool tensor_cores) {
  tensor_cores = tensor_cores && precision != Precision::FP32;
  if (tensor_cores && stream_applies(k, n_queries, precision, ld)) return stream_group(n_queries);
  const SelectLayout layout = select_layout(k);
  const int64_t group = std::min<int64_t>(tensor_cores ? layout.group : std::min(layout.group, kSimtGroup), n_queries);
  return static_cast<int>(std::max<int64_t>(group, 1));
}

int fused_blocks_per_multiprocessor(int k, int64_t n_queries, Precision precision, int64_t ld, bool tensor_cores) {
  tensor_cores = tensor_cores && precision != Precision::FP32;
  if (tensor_cores && stream_applies(k, n_queries, precision, ld)) {
    return stream_blocks_per_multiprocessor(n_queries, precision, ld);
  }
  const SelectLayout layout = select_layout(k);
  const int group = fused_group(k, n_queries, precision, ld, tensor_cores);
  switch (precision) {
    case Precision::FP32: return resident<float, false>(layout, group);
    case Precision::FP16:
      return tensor_cores ? resident<__half, true>(layout, group) : resident<__half, false>(layout, group);
    case Precision::BF16:
      return tensor_cores ? resident<__nv_bfloat16, true>(layout, group) : resident<__nv_bfloat16, false>(layout, group);
  }
  return 1;
}

cudaError_t fused_topk(const FusedTopkArgs& args, Precision precision, bool tensor_cores, cudaStream_t stream) {
  if (args.n_queries == 0 || args.row_end <= args.row_begin) return cudaSuccess;
  if (args.k < 1 || args.k > 1024 || args.n_splits < 1 || args.n_splits > 65535 || args.ld % 8 != 0 ||
      args.row_end > 0xFFFFFFFFll) {
    return cudaErrorInvalidValue;
  }
  tensor_cores = tensor_cores && precision != Precision::FP32;
  if (tensor_cores && stream_applies(args.k, args.n_queries, precision, args.ld)) {
    return stream_topk(args, precision, stream);
  }
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
  p.layout = select_layout(args.k);
  p.group = fused_group(args.k, args.n_queries, precision, args.ld, tensor_cores);
  p.n_splits = args.n_splits;
  p.partial = args.partial;
  const int64_t groups = (args.n_queries + p.group - 1) / p.group;
  if (groups > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(args.n_splits));
  switch (precision) {
    case Precision::FP32: return launch<float, false>(p, grid, stream);
    case Precision::FP16:
      return tensor_cores ? launch<__half, true>(p, grid, stream) : launch<__half, false>(p, grid, stream);
    case Precision::BF16:
      return tensor_cores ? launch<__nv_bfloat16, true>(p, grid, stream)
                          : launch<__nv_bfloat16, false>(p, grid, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace relmem::gpu::kernels
