#pragma once
// An LLM behind an OpenAI-compatible HTTP endpoint (OpenAI, vLLM, Ollama, llama.cpp server), over libcurl.
#include <optional>
#include <string>

#include "relmem/llm/chat.hpp"
#include "relmem/llm/retry_policy.hpp"

namespace relmem {

struct OpenAIChatConfig {
  std::string base_url;  // e.g. "https://api.openai.com/v1", "http://localhost:11434/v1"
  std::string model;
  std::string api_key_env = "RELMEM_LLM_API_KEY";  // read once at construction; unset or empty: no Authorization
  double timeout_seconds = 120.0;                   // per attempt
  RetryPolicy retry;
  std::optional<double> temperature = 0.0;  // used when a request leaves it unset; 0 for reproducible runs
  std::optional<int> max_tokens;            // used when a request leaves it unset
};

// Whether relmem was built with libcurl (RELMEM_WITH_HTTP); without it, constructing an OpenAIChat throws
// relmem::Error saying so.
bool built_with_http();

class OpenAIChat : public LLM {
 public:
  explicit OpenAIChat(OpenAIChatConfig config);

  std::string identity() const override;
  const OpenAIChatConfig& config() const { return config_; }
  const std::string& url() const { return url_; }

 protected:
  // Retries timeouts, dropped connections, 429 and 5xx with exponential backoff (Retry-After wins); fails at once
  // on other 4xx and on malformed 2xx bodies. Every failure is a relmem::Error naming the URL, model and stage.
  ChatResponse do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) override;

 private:
  OpenAIChatConfig config_;
  std::string url_;
  std::string api_key_;
};

}  // namespace relmem
