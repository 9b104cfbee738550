#include "relmem/llm/openai_chat.hpp"

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "http_post.hpp"
#include "relmem/llm/openai_protocol.hpp"

namespace relmem {

OpenAIChat::OpenAIChat(OpenAIChatConfig config) : config_(std::move(config)) {
  require_http();
  if (config_.model.empty()) throw Error("LLM model name is empty");
  if (!(config_.timeout_seconds > 0)) throw Error("LLM timeout must be positive");
  if (config_.retry.max_retries < 0) throw Error("LLM max_retries must be >= 0");
  url_ = chat_completions_url(config_.base_url);
  if (url_.rfind("http://", 0) != 0 && url_.rfind("https://", 0) != 0) {
    throw Error("LLM base URL must start with http:// or https://, got '" + config_.base_url + "'");
  }
  if (!config_.api_key_env.empty()) {
    if (const char* key = std::getenv(config_.api_key_env.c_str())) api_key_ = key;
  }
}

std::string OpenAIChat::identity() const {
  std::ostringstream out;
  out << "openai-chat model=" << config_.model;
  if (config_.temperature) out << " temperature=" << *config_.temperature;
  if (config_.max_tokens) out << " max_tokens=" << *config_.max_tokens;
  return out.str();
}

ChatResponse OpenAIChat::do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  ChatParams effective = params;
  if (!effective.temperature) effective.temperature = config_.temperature;
  if (!effective.max_tokens) effective.max_tokens = config_.max_tokens;
  const std::string body = build_chat_request(config_.model, messages, effective);

  std::vector<std::string> headers = {"Content-Type: application/json", "Accept: application/json", "Expect:"};
  if (!api_key_.empty()) headers.push_back("Authorization: Bearer " + api_key_);
  if (!params.stage.empty()) headers.push_back("X-Relmem-Stage: " + params.stage);

  const std::string context = "LLM request to " + url_ + " (model " + config_.model +
                              (params.stage.empty() ? "" : ", stage " + params.stage) + ")";
  const int attempts = config_.retry.max_retries + 1;
  std::string last_failure;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const HttpResult result = http_post(url_, body, headers, config_.timeout_seconds);
    if (!result.delivered) {
      last_failure = result.transport_error;
      if (!result.transient) throw Error(context + " failed: " + last_failure);
    } else if (result.status >= 200 && result.status < 300) {
      try {
        return parse_chat_response(result.status, result.body, messages);
      } catch (const Error& e) {
        throw Error(context + " failed: " + e.what());
      }
    } else {
      last_failure = "HTTP " + std::to_string(result.status) + ": " + body_snippet(result.body);
      if (!is_retryable_status(result.status)) throw Error(context + " failed: " + last_failure);
    }
    if (attempt + 1 < attempts) {
      const double delay = config_.retry.delay_seconds(attempt, result.retry_after);
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    }
  }
  throw Error(context + " failed after " + std::to_string(attempts) + " attempt" + (attempts == 1 ? "" : "s") +
              ": " + last_failure);
}

}  // namespace relmem
