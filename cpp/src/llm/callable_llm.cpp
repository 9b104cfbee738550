#include "relmem/llm/callable_llm.hpp"

namespace relmem {

CallableLLM::CallableLLM(ChatFunction function, std::string name)
    : function_(std::move(function)), name_(std::move(name)) {
  if (!function_) throw Error("CallableLLM needs a function");
}

ChatResponse CallableLLM::do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  return function_(messages, params);
}

}  // namespace relmem
