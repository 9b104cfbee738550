#include "relmem/llm/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace relmem {

double RetryPolicy::delay_seconds(int retry, std::optional<double> retry_after) const {
  if (retry_after) return std::clamp(*retry_after, 0.0, max_retry_after_seconds);
  const double exponential = initial_backoff_seconds * std::pow(2.0, std::max(retry, 0));
  return std::clamp(exponential, 0.0, max_backoff_seconds);
}

bool is_retryable_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

std::optional<double> parse_retry_after(const std::string& value) {
  const auto first = value.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::nullopt;
  const auto last = value.find_last_not_of(" \t\r\n");
  const std::string trimmed = value.substr(first, last - first + 1);
  char* end = nullptr;
  const double seconds = std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size() || !std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return seconds;
}

}  // namespace relmem
