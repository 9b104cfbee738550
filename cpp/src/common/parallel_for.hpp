#pragma once
// fn(i) for every i in [0, n), on the OpenMP threads when n >= min_parallel (else in order on this thread). An
// exception thrown by fn cannot cross the parallel region: the first one is kept and rethrown after the loop.
#include <cstdint>
#include <exception>

namespace relmem {

template <typename Fn>
void parallel_for(int64_t n, int64_t min_parallel, const Fn& fn) {
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic) if (n >= min_parallel)
  for (int64_t i = 0; i < n; ++i) {
    try {
      fn(i);
    } catch (...) {
#pragma omp critical(relmem_parallel_for)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace relmem
