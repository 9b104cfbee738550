#pragma once
// The LLM interface every pipeline stage talks to: chat messages and parameters in, text and token usage out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ChatParams {
  std::optional<double> temperature;  // unset: the LLM's own default
  std::optional<int> max_tokens;      // unset: the LLM's own default
  std::vector<std::string> stop;
  std::string stage;  // the pipeline stage this request serves, named by the stage (printable ASCII); empty: none
  // Constrained decoding, at most one of the two; empty: free text. An LLM that cannot enforce one ignores it and
  // the stage's parser reads the free text leniently.
  std::string grammar;      // a GBNF grammar (llama.cpp's notation) the whole reply must match
  std::string json_schema;  // a JSON schema (as JSON text) the reply must be an instance of
};

struct TokenUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool estimated = false;  // counted by estimate_usage() because the LLM reported none
  int64_t total_tokens() const { return prompt_tokens + completion_tokens; }
};

struct ChatResponse {
  std::string text;
  TokenUsage usage;
  std::string finish_reason = "stop";  // "length" means the text was cut at max_tokens
  bool cached = false;                 // served by CachedLLM without calling the LLM
};

// Rough count for LLMs that report no usage: about 4 characters per token, rounded up.
int64_t estimate_tokens(const std::string& text);
TokenUsage estimate_usage(const std::vector<ChatMessage>& messages, const std::string& completion);

class LLM {
 public:
  virtual ~LLM() = default;

  // Validates the request (printable stage name, known roles, at least one message, sane parameters), then asks
  // the LLM.
  // Throws relmem::Error on invalid requests and on failures the LLM reports.
  ChatResponse chat(const std::vector<ChatMessage>& messages, const ChatParams& params = {});

  // Names the model and any defaults that change its answers; part of the response-cache key.
  virtual std::string identity() const = 0;

 protected:
  virtual ChatResponse do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) = 0;
};

}  // namespace relmem
