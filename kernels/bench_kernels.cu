// Kernel-level benchmark of the small-batch search (fused_topk + merge_topk) on fp16 rows: device times from CUDA
// events, the whole call as the CUDA store makes it (query upload and conversion, kernels, download), the
// device-to-device copy and a read-only pass as ceilings, and a check of the top-k against fused_topk_reference on
// the first rows. Needs no cuBLAS or other library; scripts/gpu_checks.sh (step kernelbench) builds it with nvcc:
//
//   bench_kernels [n=1000000] [dim=512] [queries=1,8,64] [k=10] [repeats=20]
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernel_launch.hpp"
#include "relmem/index/gpu/reference_kernels.hpp"
#include "relmem/index/gpu/topk_keys.hpp"

using namespace relmem::gpu;

namespace {

constexpr double kDatasheetGbs = 4800.0;  // H200 SXM datasheet HBM bandwidth; the figures name the device

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

__global__ void fill_random(__half* out, int64_t n, int64_t ld, int dim, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n * ld; i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float u = (h & 0xFFFFFF) / 16777216.0f * 2.0f - 1.0f;
    out[i] = __float2half_rn(i % ld < dim ? u * 1.7320508f / sqrtf(static_cast<float>(dim)) : 0.0f);
  }
}

// Reads every 16-byte vector once (four in flight per thread) and keeps a sum, so the loads are not removed.
__global__ void read_all(const uint4* data, int64_t vectors, unsigned* sink) {
  unsigned sum = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldcs(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) sum ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < vectors; i += stride) sum ^= data[i].x;
  if (sum == 0x12345678u) *sink = sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Events {
  cudaEvent_t a, b, c;
  Events() {
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    check(cudaEventCreate(&c), "event");
  }
  static double ms(cudaEvent_t from, cudaEvent_t to) {
    float value = 0;
    check(cudaEventElapsedTime(&value, from, to), "elapsed time");
    return value;
  }
};

// Splits of the row range as the CUDA store plans them for the fused path (one wave).
int plan_splits(int k, int64_t n_queries, int64_t ld, int64_t rows, int multiprocessors) {
#ifdef RELMEM_KERNELS_BASELINE
  const int group = kernels::fused_group(k, n_queries, true);
  const int resident = kernels::fused_blocks_per_multiprocessor(k, n_queries, Precision::FP16, true);
#else
  const int group = kernels::fused_group(k, n_queries, Precision::FP16, ld, true);
  const int resident = kernels::fused_blocks_per_multiprocessor(k, n_queries, Precision::FP16, ld, true);
#endif
  const int64_t groups = (n_queries + group - 1) / group;
  int64_t splits = (int64_t{resident} * multiprocessors + groups - 1) / groups;
  const int64_t shortest = std::max<int64_t>(kernels::kTileRows, 2 * kernels::select_layout(k).slot_length);
  splits = std::min(splits, std::max<int64_t>(1, rows / shortest));
  return static_cast<int>(std::clamp<int64_t>(splits, 1, 65535));
}

struct Search {
  const __half* rows;
  int64_t ld;
  const __half* queries;
  int64_t n_queries;
  int k;
  int64_t row_end;
  int splits;
  uint64_t* partial;
  uint64_t* out;

  void fused(cudaStream_t stream) const {
    kernels::FusedTopkArgs args;
    args.queries = queries;
    args.n_queries = n_queries;
    args.rows = rows;
    args.ld = ld;
    args.row_begin = 0;
    args.row_end = row_end;
    args.k = k;
    args.n_splits = splits;
    args.partial = partial;
    check(kernels::fused_topk(args, Precision::FP16, true, stream), "fused_topk");
  }
  void merge(cudaStream_t stream) const {
    check(kernels::merge_topk(partial, n_queries, splits, k, out, k, stream), "merge_topk");
  }
};

std::vector<float> to_floats(const __half* device, int64_t count) {
  std::vector<__half> host(count);
  check(cudaMemcpy(host.data(), device, count * sizeof(__half), cudaMemcpyDeviceToHost), "download");
  std::vector<float> out(count);
  for (int64_t i = 0; i < count; ++i) out[i] = __half2float(host[i]);
  return out;
}

// Top-k of the first check_rows rows against fused_topk_reference: ids in both lists, and the largest score gap
// rank by rank.
void check_against_reference(Search s, int dim, int64_t check_rows, int multiprocessors, cudaStream_t stream) {
  s.row_end = check_rows;
  s.splits = plan_splits(s.k, s.n_queries, s.ld, check_rows, multiprocessors);
  check(cudaMemset(s.out, 0xFF, s.n_queries * s.k * sizeof(uint64_t)), "poison");
  s.fused(stream);
  s.merge(stream);
  check(cudaStreamSynchronize(stream), "check");
  std::vector<uint64_t> got(s.n_queries * s.k);
  check(cudaMemcpy(got.data(), s.out, got.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost), "download");
  const std::vector<float> rows_ld = to_floats(s.rows, check_rows * s.ld);
  const std::vector<float> queries_ld = to_floats(s.queries, s.n_queries * s.ld);
  std::vector<float> rows(check_rows * dim), queries(s.n_queries * dim);
  for (int64_t r = 0; r < check_rows; ++r) std::copy_n(&rows_ld[r * s.ld], dim, &rows[r * dim]);
  for (int64_t q = 0; q < s.n_queries; ++q) std::copy_n(&queries_ld[q * s.ld], dim, &queries[q * dim]);
  std::vector<uint64_t> expected(got.size());
  fused_topk_reference(queries.data(), s.n_queries, rows.data(), dim, 0, check_rows, nullptr, s.k, expected.data());
  int64_t same = 0;
  double gap = 0;
  for (int64_t q = 0; q < s.n_queries; ++q) {
    for (int j = 0; j < s.k; ++j) {
      const uint64_t key = got[q * s.k + j];
      same += std::any_of(&expected[q * s.k], &expected[(q + 1) * s.k],
                          [&](uint64_t e) { return topk_key_row(e) == topk_key_row(key); });
      gap = std::max<double>(gap, std::fabs(topk_key_score(key) - topk_key_score(expected[q * s.k + j])));
    }
  }
  const double agreement = static_cast<double>(same) / got.size();
  std::printf("check q=%lld rows=%lld splits=%d: ids agree %.4f, largest score gap %.2e: %s\n",
              static_cast<long long>(s.n_queries), static_cast<long long>(check_rows), s.splits, agreement, gap,
              agreement >= 0.99 && gap <= 1e-3 ? "PASS" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int dim = argc > 2 ? std::atoi(argv[2]) : 512;
  const std::string batch_list = argc > 3 ? argv[3] : "1,8,64";
  const int k = argc > 4 ? std::atoi(argv[4]) : 10;
  const int repeats = argc > 5 ? std::atoi(argv[5]) : 20;
  std::vector<int64_t> batches;
  for (size_t at = 0; at < batch_list.size();) {
    const size_t comma = batch_list.find(',', at);
    batches.push_back(std::atoll(batch_list.substr(at, comma - at).c_str()));
    at = comma == std::string::npos ? batch_list.size() : comma + 1;
  }
  const int64_t ld = kernels::padded_ld(dim);
  const double bytes = static_cast<double>(n) * ld * sizeof(__half);

  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "properties");
  int memory_clock_khz = 0;
  check(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, 0), "memory clock");
  std::printf("device %s, %d SMs, %.0f GB/s from clocks, %.0f GB/s datasheet; rows %lld x %d fp16 (%.3f GB), k %d\n",
              properties.name, properties.multiProcessorCount,
              2.0 * memory_clock_khz * 1e3 * (properties.memoryBusWidth / 8.0) / 1e9, kDatasheetGbs,
              static_cast<long long>(n), dim, bytes / 1e9, k);

  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  Events events;
  __half* rows = nullptr;
  __half* copy = nullptr;
  check(cudaMalloc(&rows, n * ld * sizeof(__half)), "rows");
  check(cudaMalloc(&copy, n * ld * sizeof(__half)), "copy");
  fill_random<<<4096, 256, 0, stream>>>(rows, n, ld, dim, 1);
  check(cudaGetLastError(), "fill");

  // Ceilings: the device-to-device copy (bytes read plus bytes written) and a read-only pass.
  std::vector<double> copy_ms, read_ms;
  unsigned* sink = nullptr;
  check(cudaMalloc(&sink, sizeof(unsigned)), "sink");
  for (int r = 0; r <= repeats; ++r) {
    check(cudaEventRecord(events.a, stream), "record");
    check(cudaMemcpyAsync(copy, rows, n * ld * sizeof(__half), cudaMemcpyDeviceToDevice, stream), "copy");
    check(cudaEventRecord(events.b, stream), "record");
    read_all<<<properties.multiProcessorCount * 8, 512, 0, stream>>>(reinterpret_cast<const uint4*>(rows),
                                                                     n * ld * 2 / 16, sink);
    check(cudaEventRecord(events.c, stream), "record");
    check(cudaEventSynchronize(events.c), "sync");
    if (r == 0) continue;
    copy_ms.push_back(Events::ms(events.a, events.b));
    read_ms.push_back(Events::ms(events.b, events.c));
  }
  const double copy_gbs = 2 * bytes / median(copy_ms) / 1e6;
  const double read_gbs = bytes / median(read_ms) / 1e6;
  std::printf("device-to-device copy %.3f ms: %.0f GB/s (read + write), %.3f of the datasheet\n", median(copy_ms),
              copy_gbs, copy_gbs / kDatasheetGbs);
  std::printf("read-only pass        %.3f ms: %.0f GB/s, %.3f of the datasheet\n", median(read_ms), read_gbs,
              read_gbs / kDatasheetGbs);
  check(cudaFree(copy), "free");

  std::printf("%7s %6s %10s %10s %10s %10s %9s %7s %7s %7s\n", "queries", "splits", "fused_us", "merge_us",
              "kernels_us", "call_us", "GB/s", "share", "/read", "call");
  for (const int64_t n_queries : batches) {
    __half* queries = nullptr;
    float* query_floats = nullptr;
    float* pinned_queries = nullptr;
    uint64_t* pinned_keys = nullptr;
    uint64_t *partial = nullptr, *out = nullptr;
    const int splits = plan_splits(k, n_queries, ld, n, properties.multiProcessorCount);
    check(cudaMalloc(&queries, n_queries * ld * sizeof(__half)), "queries");
    check(cudaMalloc(&query_floats, n_queries * dim * sizeof(float)), "query floats");
    check(cudaMallocHost(&pinned_queries, n_queries * dim * sizeof(float)), "pinned");
    check(cudaMallocHost(&pinned_keys, n_queries * k * sizeof(uint64_t)), "pinned");
    check(cudaMalloc(&partial, n_queries * std::max(splits, 1024) * k * sizeof(uint64_t)), "partial");
    check(cudaMalloc(&out, n_queries * k * sizeof(uint64_t)), "out");
    fill_random<<<256, 256, 0, stream>>>(queries, n_queries, ld, dim, static_cast<uint32_t>(7 + n_queries));
    for (int64_t i = 0; i < n_queries * dim; ++i) pinned_queries[i] = std::sin(0.37 * i);
    const Search search{rows, ld, queries, n_queries, k, n, splits, partial, out};

    std::vector<double> fused_ms, merge_ms, kernels_ms, call_ms;
    for (int r = 0; r <= repeats; ++r) {
      check(cudaEventRecord(events.a, stream), "record");
      search.fused(stream);
      check(cudaEventRecord(events.b, stream), "record");
      search.merge(stream);
      check(cudaEventRecord(events.c, stream), "record");
      check(cudaEventSynchronize(events.c), "sync");
      // The whole call as the store makes it: fp32 queries up, converted, searched, keys down.
      const auto start = std::chrono::steady_clock::now();
      check(cudaMemcpyAsync(query_floats, pinned_queries, n_queries * dim * sizeof(float), cudaMemcpyHostToDevice,
                            stream),
            "upload");
      check(kernels::normalize_convert(query_floats, n_queries, dim, true, Precision::FP16, queries, ld, stream),
            "convert");
      search.fused(stream);
      search.merge(stream);
      check(cudaMemcpyAsync(pinned_keys, out, n_queries * k * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream),
            "download");
      check(cudaStreamSynchronize(stream), "call");
      const double call = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (r == 0) continue;
      fused_ms.push_back(Events::ms(events.a, events.b));
      merge_ms.push_back(Events::ms(events.b, events.c));
      kernels_ms.push_back(Events::ms(events.a, events.c));
      call_ms.push_back(call);
    }
    const double kernels_gbs = bytes / median(kernels_ms) / 1e6;
    std::printf("%7lld %6d %10.1f %10.1f %10.1f %10.1f %9.0f %7.3f %7.3f %7.3f\n", static_cast<long long>(n_queries),
                splits, 1e3 * median(fused_ms), 1e3 * median(merge_ms), 1e3 * median(kernels_ms),
                1e3 * median(call_ms), kernels_gbs, kernels_gbs / kDatasheetGbs, kernels_gbs / read_gbs,
                bytes / median(call_ms) / 1e6 / kDatasheetGbs);
    fill_random<<<256, 256, 0, stream>>>(queries, n_queries, ld, dim, static_cast<uint32_t>(7 + n_queries));
    check_against_reference(search, dim, std::min<int64_t>(n, 65536), properties.multiProcessorCount, stream);
    check(cudaFree(queries), "free");
    check(cudaFree(query_floats), "free");
    check(cudaFreeHost(pinned_queries), "free");
    check(cudaFreeHost(pinned_keys), "free");
    check(cudaFree(partial), "free");
    check(cudaFree(out), "free");
  }
  std::printf("columns: fused_us and merge_us are CUDA-event medians of each kernel, kernels_us of both; call_us is "
              "the host-timed median of a whole call (upload, convert, kernels, download); GB/s and share (of the "
              "%.0f GB/s datasheet) count the rows once over kernels_us; /read is that over the read-only pass; call "
              "is the share over call_us\n",
              kDatasheetGbs);
  return 0;
}
