#pragma once
// One HTTP POST over libcurl, reporting transport failures as data so the caller can decide to retry. Without libcurl
// (RELMEM_WITH_HTTP=OFF) http_unavailable.cpp replaces http_post.cpp.
#include <optional>
#include <string>
#include <vector>

namespace relmem {

struct HttpResult {
  bool delivered = false;   // false: no complete HTTP response (see transport_error)
  bool transient = false;   // the transport failure may go away on retry (timeout, refused or dropped connection)
  std::string transport_error;
  long status = 0;
  std::string body;
  std::optional<double> retry_after;  // seconds, from a Retry-After header
};

// relmem::Error, saying so, when relmem was built without libcurl.
void require_http();

HttpResult http_post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                     double timeout_seconds);

}  // namespace relmem
