#include "relmem/llm/token_ledger.hpp"

namespace relmem {

void StageTokens::add(const StageTokens& other) {
  prompt_tokens += other.prompt_tokens;
  completion_tokens += other.completion_tokens;
  calls += other.calls;
  cached_calls += other.cached_calls;
  estimated_calls += other.estimated_calls;
}

void TokenLedger::record(const std::string& stage, const ChatResponse& response) {
  StageTokens call;
  call.prompt_tokens = response.usage.prompt_tokens;
  call.completion_tokens = response.usage.completion_tokens;
  call.calls = 1;
  call.cached_calls = response.cached ? 1 : 0;
  call.estimated_calls = response.usage.estimated ? 1 : 0;
  std::lock_guard<std::mutex> lock(mutex_);
  stages_[stage.empty() ? kUnspecifiedStage : stage].add(call);
}

void TokenLedger::merge(const TokenLedger& other) {
  const auto theirs = other.by_stage();  // copied first: merging a ledger into itself must not deadlock
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [stage, tokens] : theirs) stages_[stage].add(tokens);
}

void TokenLedger::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  stages_.clear();
}

std::map<std::string, StageTokens> TokenLedger::by_stage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stages_;
}

StageTokens TokenLedger::total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  StageTokens sum;
  for (const auto& [stage, tokens] : stages_) sum.add(tokens);
  return sum;
}

}  // namespace relmem
