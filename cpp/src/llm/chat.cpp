#include "relmem/llm/chat.hpp"

#include <algorithm>

namespace relmem {

int64_t estimate_tokens(const std::string& text) { return (static_cast<int64_t>(text.size()) + 3) / 4; }

TokenUsage estimate_usage(const std::vector<ChatMessage>& messages, const std::string& completion) {
  TokenUsage usage;
  for (const auto& message : messages) usage.prompt_tokens += estimate_tokens(message.content);
  usage.completion_tokens = estimate_tokens(completion);
  usage.estimated = true;
  return usage;
}

namespace {

// Stage names are the stages' own; they travel as an HTTP header, so they stay short printable ASCII.
void check_stage_name(const std::string& stage) {
  constexpr size_t kMaxLength = 64;
  const bool printable =
      std::all_of(stage.begin(), stage.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
  if (printable && stage.size() <= kMaxLength) return;
  throw Error("LLM stage name must be printable ASCII of at most " + std::to_string(kMaxLength) +
              " characters (got " + std::to_string(stage.size()) + " bytes" + (printable ? "" : " with others") + ")");
}

void check_request(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  check_stage_name(params.stage);
  if (messages.empty()) throw Error("LLM request has no messages");
  for (const auto& message : messages) {
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      throw Error("LLM message role must be system, user or assistant, not '" + message.role + "'");
    }
  }
  if (params.temperature && !(*params.temperature >= 0.0)) throw Error("LLM temperature must be >= 0");
  if (params.max_tokens && *params.max_tokens <= 0) throw Error("LLM max_tokens must be positive");
  if (!params.grammar.empty() && !params.json_schema.empty()) {
    throw Error("an LLM request takes a grammar or a JSON schema, not both");
  }
}

}  // namespace

ChatResponse LLM::chat(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  check_request(messages, params);
  return do_chat(messages, params);
}

}  // namespace relmem
