#pragma once
// Private to the catalog: the wall-clock limit of one statement. A timer thread interrupts SQLite when the time is
// up (sqlite3_interrupt), so the limit also holds while SQLite is inside a long operation that never returns to
// the virtual machine's loop, and functions relmem registers stop on the same flag (bounded_functions.hpp).
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace relmem {

class QueryWatchdog {
 public:
  // Starts the timer; `db` must stay open until the watchdog is destroyed.
  QueryWatchdog(sqlite3* db, double seconds);
  ~QueryWatchdog();  // stops the timer
  QueryWatchdog(const QueryWatchdog&) = delete;
  QueryWatchdog& operator=(const QueryWatchdog&) = delete;

  bool expired() const { return expired_.load(std::memory_order_relaxed); }
  const std::atomic<bool>& expired_flag() const { return expired_; }

 private:
  sqlite3* db_;
  std::atomic<bool> expired_{false};
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread timer_;
};

}  // namespace relmem
