#include "relmem/llm/metered_llm.hpp"

namespace relmem {

MeteredLLM::MeteredLLM(std::shared_ptr<LLM> inner, std::shared_ptr<TokenLedger> ledger)
    : inner_(std::move(inner)), ledger_(std::move(ledger)) {
  if (!inner_) throw Error("MeteredLLM needs an LLM");
  if (!ledger_) throw Error("MeteredLLM needs a ledger");
}

ChatResponse MeteredLLM::do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  ChatResponse response = inner_->chat(messages, params);
  ledger_->record(params.stage, response);
  return response;
}

}  // namespace relmem
