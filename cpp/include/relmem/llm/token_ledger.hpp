#pragma once
// Token accounting per pipeline stage: reset it per question, merge question ledgers into a run ledger.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "relmem/llm/chat.hpp"

namespace relmem {

struct StageTokens {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t calls = 0;
  int64_t cached_calls = 0;     // calls CachedLLM answered from disk (their tokens are the original call's)
  int64_t estimated_calls = 0;  // calls whose usage was estimated, not reported by the LLM
  int64_t total_tokens() const { return prompt_tokens + completion_tokens; }
  void add(const StageTokens& other);
};

class TokenLedger {
 public:
  static constexpr const char* kUnspecifiedStage = "unspecified";  // where requests without a stage are counted

  void record(const std::string& stage, const ChatResponse& response);
  void merge(const TokenLedger& other);
  void reset();

  std::map<std::string, StageTokens> by_stage() const;
  StageTokens total() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, StageTokens> stages_;
};

}  // namespace relmem
