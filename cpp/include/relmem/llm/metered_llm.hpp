#pragma once
// An LLM wrapper that does the token accounting.
#include <memory>
#include <string>
#include <vector>

#include "relmem/llm/chat.hpp"
#include "relmem/llm/token_ledger.hpp"

namespace relmem {

// Wraps any LLM and records every successful call in a ledger under the request's stage.
class MeteredLLM : public LLM {
 public:
  MeteredLLM(std::shared_ptr<LLM> inner, std::shared_ptr<TokenLedger> ledger);

  std::string identity() const override { return inner_->identity(); }
  const std::shared_ptr<LLM>& inner() const { return inner_; }
  const std::shared_ptr<TokenLedger>& ledger() const { return ledger_; }

 protected:
  ChatResponse do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) override;

 private:
  std::shared_ptr<LLM> inner_;
  std::shared_ptr<TokenLedger> ledger_;
};

}  // namespace relmem
