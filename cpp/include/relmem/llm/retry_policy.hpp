#pragma once
// When and how long to wait before retrying an LLM request.
#include <optional>
#include <string>

namespace relmem {

struct RetryPolicy {
  int max_retries = 3;                   // attempts = 1 + max_retries
  double initial_backoff_seconds = 1.0;  // the wait before the first retry; doubles on each retry
  double max_backoff_seconds = 30.0;     // ceiling of the exponential schedule
  double max_retry_after_seconds = 120.0;  // ceiling on a server's Retry-After, so a bad header cannot hang a run

  // Seconds to wait before retry number `retry` (0 for the first retry). A Retry-After from the server wins over
  // the exponential schedule.
  double delay_seconds(int retry, std::optional<double> retry_after = std::nullopt) const;
};

// Status codes worth retrying: 429 (rate limited) and every 5xx.
bool is_retryable_status(long status);

// The value of a Retry-After header in seconds ("3", "1.5"); nullopt for HTTP dates and anything unparsable.
std::optional<double> parse_retry_after(const std::string& value);

}  // namespace relmem
