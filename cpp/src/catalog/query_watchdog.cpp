#include "query_watchdog.hpp"

#include <algorithm>
#include <chrono>

namespace relmem {

QueryWatchdog::QueryWatchdog(sqlite3* db, double seconds) : db_(db) {
  // NaN and negative limits expire at once; absurdly long ones are clamped to what a time point can hold.
  const auto limit = std::chrono::duration<double>(seconds > 0 ? std::min(seconds, 1e7) : 0.0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(limit);
  timer_ = std::thread([this, deadline] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (stop_.wait_until(lock, deadline, [this] { return stopping_; })) return;
    expired_.store(true);
    sqlite3_interrupt(db_);
  });
}

QueryWatchdog::~QueryWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  timer_.join();
}

}  // namespace relmem
