// Launchers of the tile selection and merge kernels (topk_select.cuh).
// References: tile_select_reference, merge_topk_reference (cpp/src/index/gpu/reference_kernels.cpp).
#include "kernel_launch.hpp"
#include "topk_select.cuh"

namespace relmem::gpu::kernels {
namespace {

cudaError_t set_shared_bytes(const void* kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace

cudaError_t tile_select(const TileSelectArgs& args, cudaStream_t stream) {
  if (args.n_queries == 0) return cudaSuccess;
  if (args.k < 1 || args.k > 1024 || args.n_splits < 1 || args.n_splits > 65535 ||
      args.first_list + args.n_splits > args.n_lists || args.first_row + args.n_columns > 0xFFFFFFFFll) {
    return cudaErrorInvalidValue;
  }
  const SelectLayout layout = select_layout(args.k);
  const int64_t per_split = (args.n_columns + args.n_splits - 1) / args.n_splits;
  TileParams p;
  p.scores = args.scores;
  p.n_queries = args.n_queries;
  p.ld = args.ld;
  p.n_columns = args.n_columns;
  p.first_row = args.first_row;
  p.columns_per_split = (per_split + kTileRows - 1) / kTileRows * kTileRows;
  p.mask = args.mask;
  p.layout = layout;
  p.n_lists = args.n_lists;
  p.first_list = args.first_list;
  p.seed_from_list0 = args.seed_from_list0 && args.first_list > 0;
  p.partial = args.partial;
  const int64_t groups = (args.n_queries + layout.group - 1) / layout.group;
  if (groups > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const size_t shared = BlockTopK::bytes(layout, layout.group);
  const cudaError_t status = set_shared_bytes(reinterpret_cast<const void*>(tile_select_kernel), shared);
  if (status != cudaSuccess) return status;
  tile_select_kernel<<<dim3(static_cast<unsigned>(groups), static_cast<unsigned>(args.n_splits)), kThreads,
                       shared, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t merge_topk(const uint64_t* lists, int64_t n_queries, int n_lists, int k, uint64_t* out,
                       int64_t out_stride, cudaStream_t stream) {
  if (n_queries == 0) return cudaSuccess;
  if (k < 1 || k > 1024 || n_lists < 1 || n_queries > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const SelectLayout layout = select_layout(k);
  const size_t shared = BlockTopK::bytes(layout, 1);
  const cudaError_t status = set_shared_bytes(reinterpret_cast<const void*>(merge_topk_kernel), shared);
  if (status != cudaSuccess) return status;
  merge_topk_kernel<<<static_cast<unsigned>(n_queries), kThreads, shared, stream>>>(lists, n_lists, layout, out,
                                                                                   out_stride);
  return cudaGetLastError();
}

}  // namespace relmem::gpu::kernels
