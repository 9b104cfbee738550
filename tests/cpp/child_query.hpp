#pragma once
// Runs one read-only query in a child process and reports how it ended: how long it took, how much memory the
// child used at most, and its outcome. A query that crashes or hangs the process shows as such, never takes the
// test binary down with it.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "relmem/catalog/executor.hpp"

namespace relmem_test {

struct ChildQuery {
  double seconds = 0;
  int64_t max_rss_bytes = 0;
  int signal = 0;        // the signal that ended the child, 0 when it exited
  std::string outcome;   // "ok:<first value>" or "<error kind>:<message>"
};

// `hard_limit_seconds`: the child is killed (signal 9) once it runs this long.
inline ChildQuery run_query_in_child(const std::string& db, const std::string& sql, double time_limit,
                                     double hard_limit_seconds = 20) {
  int fds[2];
  if (pipe(fds) != 0) return {0, 0, -1, "pipe failed"};
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    relmem::ExecOptions options;
    options.timeout_seconds = time_limit;
    const relmem::QueryResult result = relmem::execute_readonly(db, sql, options);
    std::string outcome;
    if (result.ok())
      outcome = "ok:" + (result.rows.empty() || result.rows[0].empty() ? "" : relmem::value_to_string(result.rows[0][0]));
    else
      outcome = relmem::sql_error_kind_name(result.error->kind) + ":" + result.error->message;
    outcome = outcome.substr(0, 4096);
    for (size_t written = 0; written < outcome.size();) {
      const ssize_t n = write(fds[1], outcome.data() + written, outcome.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  ChildQuery child;
  char buffer[4096];
  pollfd waiting{fds[0], POLLIN, 0};
  while (true) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (spent > hard_limit_seconds) {
      kill(pid, SIGKILL);
      break;
    }
    if (poll(&waiting, 1, 50) <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // the child finished (or died): the pipe is closed
    child.outcome.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  child.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  child.max_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  child.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return child;
}

}  // namespace relmem_test
