// The HTTP entry points of a build without libcurl (RELMEM_WITH_HTTP=OFF): they say so instead of failing to link.
// With libcurl, http_post.cpp defines them instead.
#include "http_post.hpp"
#include "relmem/common.hpp"
#include "relmem/llm/openai_chat.hpp"

namespace relmem {

bool built_with_http() { return false; }

void require_http() {
  throw Error(
      "relmem was built without HTTP support (libcurl was not found at configure time, or RELMEM_WITH_HTTP=OFF): "
      "OpenAIChat cannot reach an LLM server; install libcurl (libcurl4-openssl-dev) and rebuild, or use a Python "
      "callable as the LLM");
}

HttpResult http_post(const std::string&, const std::string&, const std::vector<std::string>&, double) {
  require_http();
  return {};
}

}  // namespace relmem
