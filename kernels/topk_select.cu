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

cudaError_t merge_topk(uint64_t* lists, int64_t n_queries, int n_lists, int k, uint64_t* out, int64_t out_stride,
                       cudaStream_t stream) {
  if (n_queries == 0) return cudaSuccess;
  if (k < 1 || k > 1024 || n_lists < 1 || n_queries > 0x7FFFFFFF) return cudaErrorInvalidValue;
  MergeParams p;
  p.layout = select_layout(k);
  const size_t shared = BlockTopK::bytes(p.layout, kThreads / 32);  // a slot per warp
  cudaError_t status = set_shared_bytes(reinterpret_cast<const void*>(merge_topk_kernel), shared);
  if (status != cudaSuccess) return status;
  p.lists = lists;
  p.query_stride = static_cast<int64_t>(n_lists) * k;
  p.list_step = k;
  p.n_lists = n_lists;
  // Many lists are merged by several blocks per query first, each into the first of its lists: the largest k-th key
  // of many short lists lets many candidates through (H200, one round: 66 lists 18 us, 264 lists 43-81 us).
  if (n_lists > kMergeRoundLists) {
    const int groups = (n_lists + kMergeFanIn - 1) / kMergeFanIn;
    p.lists_per_block = kMergeFanIn;
    p.out = lists;
    p.out_query_stride = p.query_stride;
    p.out_group_step = static_cast<int64_t>(kMergeFanIn) * k;
    merge_topk_kernel<<<dim3(static_cast<unsigned>(n_queries), static_cast<unsigned>(groups)), kThreads, shared,
                        stream>>>(p);
    if ((status = cudaGetLastError()) != cudaSuccess) return status;
    p.list_step = p.out_group_step;
    p.n_lists = groups;
  }
  p.lists_per_block = p.n_lists;
  p.out = out;
  p.out_query_stride = out_stride;
  p.out_group_step = 0;
  merge_topk_kernel<<<static_cast<unsigned>(n_queries), kThreads, shared, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace relmem::gpu::kernels
