#include "shared_chunks.hpp"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace relmem {
namespace {

struct SharedChunks {
  int64_t chunks = 0;
  const std::function<void(int, int64_t)>* work = nullptr;  // valid while a chunk is unfinished
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  std::condition_variable finished;
  int64_t done = 0;  // under mutex
};

void take_chunks(SharedChunks& state, int thread) {
  for (int64_t chunk; (chunk = state.next.fetch_add(1)) < state.chunks;) {
    (*state.work)(thread, chunk);
    std::lock_guard lock(state.mutex);
    if (++state.done == state.chunks) state.finished.notify_all();
  }
}

}  // namespace

void run_shared_chunks(int64_t chunks, int helpers, const std::function<void(int, int64_t)>& work) {
  auto state = std::make_shared<SharedChunks>();
  state->chunks = chunks;
  state->work = &work;
  for (int h = 1; h <= helpers && h < chunks; ++h) std::thread([state, h] { take_chunks(*state, h); }).detach();
  take_chunks(*state, 0);
  std::unique_lock lock(state->mutex);
  state->finished.wait(lock, [&] { return state->done == state->chunks; });
}

}  // namespace relmem
