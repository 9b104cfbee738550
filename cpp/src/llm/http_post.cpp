#include "http_post.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "relmem/common.hpp"
#include "relmem/llm/openai_chat.hpp"
#include "relmem/llm/retry_policy.hpp"

namespace relmem {
namespace {

void global_init_once() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("libcurl could not be initialised");
  });
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  const std::string line(data, size * count);
  const std::string name = "retry-after:";
  if (line.size() > name.size()) {
    std::string prefix = line.substr(0, name.size());
    std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](unsigned char c) { return std::tolower(c); });
    if (prefix == name) *static_cast<std::optional<double>*>(user) = parse_retry_after(line.substr(name.size()));
  }
  return size * count;
}

bool is_transient(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool built_with_http() { return true; }

void require_http() {}

HttpResult http_post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                     double timeout_seconds) {
  global_init_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw Error("libcurl could not create a handle");
  curl_slist* raw_list = nullptr;
  for (const auto& header : headers) raw_list = curl_slist_append(raw_list, header.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(raw_list, curl_slist_free_all);

  HttpResult result;
  const long timeout_ms = std::max(1L, static_cast<long>(timeout_seconds * 1000.0));
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_POST, 1L);
  curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &result.retry_after);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe in threaded programs
  curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");

  const CURLcode code = curl_easy_perform(handle);
  if (code != CURLE_OK) {
    result.transient = is_transient(code);
    result.transport_error = curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT) result.transport_error += " (limit " + std::to_string(timeout_ms) + " ms)";
    return result;
  }
  result.delivered = true;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &result.status);
  return result;
}

}  // namespace relmem
