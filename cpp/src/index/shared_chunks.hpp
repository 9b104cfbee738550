#pragma once
// Work split into chunks that the calling thread and helper threads take as they come free. The caller returns as
// soon as every chunk is done: a helper that the scheduler starts late (on a loaded host, a whole time slice or
// more) finds nothing left and exits, instead of holding everyone at a barrier as an OpenMP loop would.
#include <cstdint>
#include <functional>

namespace relmem {

// Calls work(thread, chunk) for every chunk in [0, chunks); thread is 0 for the caller and 1..helpers for the
// helpers, so work can keep per-thread results in helpers + 1 slots.
void run_shared_chunks(int64_t chunks, int helpers, const std::function<void(int thread, int64_t chunk)>& work);

}  // namespace relmem
