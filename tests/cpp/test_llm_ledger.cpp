#include <gtest/gtest.h>

#include "relmem/llm/callable_llm.hpp"
#include "relmem/llm/metered_llm.hpp"
#include "relmem/llm/token_ledger.hpp"

namespace relmem {
namespace {

ChatResponse reply(int64_t prompt, int64_t completion, bool cached = false, bool estimated = false) {
  ChatResponse response;
  response.text = "x";
  response.usage = {prompt, completion, estimated};
  response.cached = cached;
  return response;
}

TEST(TokenLedger, CountsPerStageAndInTotal) {
  TokenLedger ledger;
  ledger.record("plan", reply(100, 20));
  ledger.record("plan", reply(50, 10, /*cached=*/true));
  ledger.record("refine", reply(7, 3, false, /*estimated=*/true));
  ledger.record("", reply(1, 1));
  const auto stages = ledger.by_stage();
  ASSERT_EQ(stages.size(), 3u);
  EXPECT_EQ(stages.at("plan").prompt_tokens, 150);
  EXPECT_EQ(stages.at("plan").completion_tokens, 30);
  EXPECT_EQ(stages.at("plan").calls, 2);
  EXPECT_EQ(stages.at("plan").cached_calls, 1);
  EXPECT_EQ(stages.at("refine").estimated_calls, 1);
  EXPECT_EQ(stages.at(TokenLedger::kUnspecifiedStage).calls, 1);
  const StageTokens total = ledger.total();
  EXPECT_EQ(total.prompt_tokens, 158);
  EXPECT_EQ(total.completion_tokens, 34);
  EXPECT_EQ(total.total_tokens(), 192);
  EXPECT_EQ(total.calls, 4);
}

TEST(TokenLedger, ResetPerQuestionAndMergeIntoTheRun) {
  TokenLedger question, run;
  question.record("plan", reply(10, 2));
  run.merge(question);
  question.reset();
  EXPECT_EQ(question.total().calls, 0);
  question.record("plan", reply(5, 1));
  run.merge(question);
  run.merge(run);  // merging into itself doubles, and must not deadlock
  EXPECT_EQ(run.by_stage().at("plan").prompt_tokens, 30);
  EXPECT_EQ(run.total().calls, 4);
}

TEST(MeteredLLM, RecordsEachCallUnderItsStage) {
  auto inner = std::make_shared<CallableLLM>(
      [](const std::vector<ChatMessage>&, const ChatParams&) { return reply(8, 2); }, "fixed");
  auto ledger = std::make_shared<TokenLedger>();
  MeteredLLM metered(inner, ledger);
  ChatParams params;
  params.stage = "context_switch";
  metered.chat({{"user", "hi"}}, params);
  params.stage = "plan";
  metered.chat({{"user", "hi"}}, params);
  metered.chat({{"user", "hi"}}, params);
  EXPECT_EQ(ledger->by_stage().at("context_switch").calls, 1);
  EXPECT_EQ(ledger->by_stage().at("plan").prompt_tokens, 16);
  EXPECT_EQ(metered.identity(), "fixed");
}

TEST(LLMChat, ValidatesRequests) {
  int calls = 0;
  CallableLLM llm([&calls](const std::vector<ChatMessage>&, const ChatParams&) {
    ++calls;
    return reply(1, 1);
  });
  EXPECT_THROW(llm.chat({}), Error);
  EXPECT_THROW(llm.chat({{"tool", "hi"}}), Error);
  ChatParams negative;
  negative.temperature = -1;
  EXPECT_THROW(llm.chat({{"user", "hi"}}, negative), Error);
  ChatParams zero_tokens;
  zero_tokens.max_tokens = 0;
  EXPECT_THROW(llm.chat({{"user", "hi"}}, zero_tokens), Error);
  EXPECT_EQ(calls, 0);
}

TEST(LLMChat, StageNamesAreTheStagesOwnButStayPrintable) {
  std::string seen;
  CallableLLM llm([&seen](const std::vector<ChatMessage>&, const ChatParams& params) {
    seen = params.stage;
    return reply(1, 1);
  });
  ChatParams params;
  for (const std::string name : {"", "plan", "answer_directly", "my-stage 2"}) {
    params.stage = name;
    EXPECT_NO_THROW(llm.chat({{"user", "hi"}}, params)) << name;
    EXPECT_EQ(seen, name);
  }
  for (const std::string name : {std::string("plan\r\nX-Injected: 1"), std::string("pl\xc3\xa4n"), std::string(65, 'a')}) {
    params.stage = name;
    try {
      llm.chat({{"user", "hi"}}, params);
      FAIL() << "expected relmem::Error for " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("printable ASCII"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(seen, "my-stage 2");
}

TEST(CallableLLM, PassesStageAndLetsExceptionsThrough) {
  std::string seen_stage;
  CallableLLM llm([&seen_stage](const std::vector<ChatMessage>&, const ChatParams& params) {
    seen_stage = params.stage;
    if (params.stage == "refine") throw std::out_of_range("index 3");
    return reply(1, 1);
  }, "mine");
  ChatParams params;
  params.stage = "rephrase";
  llm.chat({{"user", "hi"}}, params);
  EXPECT_EQ(seen_stage, "rephrase");
  params.stage = "refine";
  EXPECT_THROW(llm.chat({{"user", "hi"}}, params), std::out_of_range);
  EXPECT_EQ(llm.identity(), "mine");
}

TEST(EstimateTokens, AboutFourCharactersPerToken) {
  EXPECT_EQ(estimate_tokens(""), 0);
  EXPECT_EQ(estimate_tokens("abc"), 1);
  EXPECT_EQ(estimate_tokens("abcd"), 1);
  EXPECT_EQ(estimate_tokens("abcde"), 2);
  const TokenUsage usage = estimate_usage({{"system", "12345678"}, {"user", "1234"}}, "123456789");
  EXPECT_EQ(usage.prompt_tokens, 3);
  EXPECT_EQ(usage.completion_tokens, 3);
  EXPECT_TRUE(usage.estimated);
}

}  // namespace
}  // namespace relmem
