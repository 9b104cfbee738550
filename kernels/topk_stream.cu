// Launcher of the streaming top-k (topk_stream.cuh), fused_topk's path for fp16/bf16 rows and small k.
// Reference: fused_topk_reference (cpp/src/index/gpu/reference_kernels.cpp), per split.
#include <algorithm>

#include "kernel_launch.hpp"
#include "topk_stream.cuh"

namespace relmem::gpu::kernels {
namespace {

// Queries per block: 8, 16 or 32 (larger batches take several groups, whose blocks read the same split from L2).
int stream_tiles(int64_t n_queries) { return n_queries <= 8 ? 1 : n_queries <= 16 ? 2 : 4; }

template <typename Element, int NT>
const void* kernel_of() {
  return reinterpret_cast<const void*>(stream_topk_kernel<Element, NT>);
}

const void* stream_kernel(Precision precision, int tiles) {
  const bool half = precision == Precision::FP16;
  switch (tiles) {
    case 1: return half ? kernel_of<__half, 1>() : kernel_of<__nv_bfloat16, 1>();
    case 2: return half ? kernel_of<__half, 2>() : kernel_of<__nv_bfloat16, 2>();
    default: return half ? kernel_of<__half, 4>() : kernel_of<__nv_bfloat16, 4>();
  }
}

size_t stream_shared_bytes(int64_t n_queries, int64_t ld) {
  return stream_shared_layout(ld, 8 * stream_tiles(n_queries), 2).total;
}

}  // namespace

bool stream_applies(int k, int64_t n_queries, Precision precision, int64_t ld) {
  if (precision == Precision::FP32 || k > kStreamMaxK) return false;
  int device = 0;
  int limit = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    return false;
  }
  return stream_shared_bytes(n_queries, ld) <= static_cast<size_t>(limit);
}

int stream_group(int64_t n_queries) { return 8 * stream_tiles(n_queries); }

int stream_blocks_per_multiprocessor(int64_t n_queries, Precision precision, int64_t ld) {
  const void* kernel = stream_kernel(precision, stream_tiles(n_queries));
  const size_t shared = stream_shared_bytes(n_queries, ld);
  int blocks = 0;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)) !=
          cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kStreamThreads, shared) != cudaSuccess) {
    return 1;
  }
  return std::max(blocks, 1);
}

cudaError_t stream_topk(const FusedTopkArgs& args, Precision precision, cudaStream_t stream) {
  const int tiles = stream_tiles(args.n_queries);
  const int64_t groups = (args.n_queries + 8 * tiles - 1) / (8 * tiles);
  if (groups > 0x7FFFFFFF) return cudaErrorInvalidValue;
  StreamParams p;
  p.queries = args.queries;
  p.n_queries = args.n_queries;
  p.rows = args.rows;
  p.ld = args.ld;
  p.row_begin = args.row_begin;
  p.row_end = args.row_end;
  const int64_t per_split = (args.row_end - args.row_begin + args.n_splits - 1) / args.n_splits;
  p.rows_per_split = (per_split + kStreamTileRows - 1) / kStreamTileRows * kStreamTileRows;
  p.mask = args.mask;
  p.k = args.k;
  p.n_splits = args.n_splits;
  p.partial = args.partial;
  const void* kernel = stream_kernel(precision, tiles);
  const size_t shared = stream_shared_bytes(args.n_queries, args.ld);
  cudaError_t status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
  if (status != cudaSuccess) return status;
  void* params[] = {&p};
  return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(groups), static_cast<unsigned>(args.n_splits)),
                          dim3(kStreamThreads), params, shared, stream);
}

}  // namespace relmem::gpu::kernels
