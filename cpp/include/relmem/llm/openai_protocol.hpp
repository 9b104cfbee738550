#pragma once
// The OpenAI-compatible /v1/chat/completions wire format, spoken by OpenAI, vLLM, Ollama and llama.cpp server.
#include <string>
#include <vector>

#include "relmem/llm/chat.hpp"

namespace relmem {

// "http://host:8000/v1" -> "http://host:8000/v1/chat/completions"; a URL already ending in
// "/chat/completions" is kept as it is.
std::string chat_completions_url(const std::string& base_url);

// The JSON request body. Unset parameters are left out so the server's defaults apply.
std::string build_chat_request(const std::string& model, const std::vector<ChatMessage>& messages,
                               const ChatParams& params);

// Reads the first choice of a 2xx response body. Throws relmem::Error naming the HTTP status and quoting the
// start of the body when it is not JSON, has no choices, or has no text. Estimates usage when the server sent none.
ChatResponse parse_chat_response(long status, const std::string& body, const std::vector<ChatMessage>& messages);

// The first `max_chars` characters of a body on one line, for error messages.
std::string body_snippet(const std::string& body, size_t max_chars = 300);

}  // namespace relmem
