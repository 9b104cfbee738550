#pragma once
// An LLM that is any function: lets C++ code and Python callables (see python/src/bind_llm.cpp) serve the pipeline.
#include <functional>
#include <string>
#include <vector>

#include "relmem/llm/chat.hpp"

namespace relmem {

using ChatFunction = std::function<ChatResponse(const std::vector<ChatMessage>&, const ChatParams&)>;

class CallableLLM : public LLM {
 public:
  // `name` stands in for the model in identity() and so in response-cache keys.
  explicit CallableLLM(ChatFunction function, std::string name = "callable");

  std::string identity() const override { return name_; }

 protected:
  // Exceptions from the function pass through unchanged: the Python binding turns Python exceptions into
  // relmem::Error itself, except KeyboardInterrupt and SystemExit.
  ChatResponse do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) override;

 private:
  ChatFunction function_;
  std::string name_;
};

}  // namespace relmem
