#include "scan_kernels.hpp"

#include "../linalg/packed_gemm.hpp"
#include "scan_isa.hpp"

namespace relmem::scan {
namespace {

using ScanFn = void (*)(const RowsView&, int64_t, const int64_t*, int64_t, const float*, int, float*);

ScanFn pick() {
  switch (gemm::best_kernel()) {
    case gemm::Kernel::kAvx512:
      if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
          __builtin_cpu_supports("avx512dq"))
        return score_avx512;
      return score_avx2;
    case gemm::Kernel::kAvx2:
      return score_avx2;
    default:
      return nullptr;
  }
}

ScanFn chosen() {
  static const ScanFn fn = pick();
  return fn;
}

}  // namespace

bool available() { return chosen() != nullptr; }

void score_rows(const RowsView& rows, int64_t begin, int64_t count, const float* queries, int n_queries, float* out) {
  chosen()(rows, begin, nullptr, count, queries, n_queries, out);
}

void score_listed_rows(const RowsView& rows, const int64_t* row_numbers, int64_t count, const float* queries,
                       int n_queries, float* out) {
  chosen()(rows, 0, row_numbers, count, queries, n_queries, out);
}

}  // namespace relmem::scan
