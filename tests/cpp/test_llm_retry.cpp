#include <gtest/gtest.h>

#include <string>

#include "relmem/common.hpp"
#include "relmem/llm/openai_chat.hpp"
#include "relmem/llm/retry_policy.hpp"

namespace relmem {
namespace {

TEST(RetryPolicy, ExponentialScheduleWithCeiling) {
  RetryPolicy policy;
  policy.initial_backoff_seconds = 0.5;
  policy.max_backoff_seconds = 3.0;
  EXPECT_DOUBLE_EQ(policy.delay_seconds(0), 0.5);
  EXPECT_DOUBLE_EQ(policy.delay_seconds(1), 1.0);
  EXPECT_DOUBLE_EQ(policy.delay_seconds(2), 2.0);
  EXPECT_DOUBLE_EQ(policy.delay_seconds(3), 3.0);
  EXPECT_DOUBLE_EQ(policy.delay_seconds(40), 3.0);
}

TEST(RetryPolicy, RetryAfterWinsAndIsBounded) {
  RetryPolicy policy;
  policy.initial_backoff_seconds = 0.5;
  policy.max_retry_after_seconds = 60.0;
  EXPECT_DOUBLE_EQ(policy.delay_seconds(0, 7.0), 7.0);
  EXPECT_DOUBLE_EQ(policy.delay_seconds(3, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(policy.delay_seconds(0, 86400.0), 60.0);
}

TEST(RetryPolicy, RetryableStatuses) {
  EXPECT_TRUE(is_retryable_status(429));
  EXPECT_TRUE(is_retryable_status(500));
  EXPECT_TRUE(is_retryable_status(503));
  EXPECT_FALSE(is_retryable_status(400));
  EXPECT_FALSE(is_retryable_status(401));
  EXPECT_FALSE(is_retryable_status(404));
  EXPECT_FALSE(is_retryable_status(200));
}

TEST(ParseRetryAfter, SecondsOnly) {
  EXPECT_EQ(parse_retry_after(" 3\r\n"), 3.0);
  EXPECT_EQ(parse_retry_after("1.5"), 1.5);
  EXPECT_EQ(parse_retry_after("0"), 0.0);
  EXPECT_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
  EXPECT_FALSE(parse_retry_after("-1"));
  EXPECT_FALSE(parse_retry_after(""));
  EXPECT_FALSE(parse_retry_after("inf"));
  EXPECT_FALSE(parse_retry_after("3 seconds"));
}

TEST(OpenAIChat, WithoutHttpConstructionIsAClearError) {
  if (built_with_http()) GTEST_SKIP() << "relmem was built with HTTP";
  OpenAIChatConfig config;
  config.base_url = "http://localhost:8000/v1";
  config.model = "m";
  try {
    OpenAIChat llm(config);
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without HTTP support"), std::string::npos) << e.what();
  }
}

TEST(OpenAIChat, RejectsBadConfiguration) {
  if (!built_with_http()) GTEST_SKIP() << "relmem was built without HTTP";
  OpenAIChatConfig config;
  config.base_url = "localhost:8000/v1";
  config.model = "m";
  EXPECT_THROW(OpenAIChat{config}, Error);
  config.base_url = "http://localhost:8000/v1";
  config.model = "";
  EXPECT_THROW(OpenAIChat{config}, Error);
  config.model = "m";
  config.timeout_seconds = 0;
  EXPECT_THROW(OpenAIChat{config}, Error);
}

TEST(OpenAIChat, UnreachableServerIsAClearErrorAfterTheRetries) {
  if (!built_with_http()) GTEST_SKIP() << "relmem was built without HTTP";
  OpenAIChatConfig config;
  config.base_url = "http://127.0.0.1:1/v1";  // port 1: nothing listens, the connection is refused at once
  config.model = "m";
  config.retry.max_retries = 2;
  config.retry.initial_backoff_seconds = 0.01;
  OpenAIChat llm(config);
  ChatParams params;
  params.stage = "plan";
  try {
    llm.chat({{"user", "hi"}}, params);
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("http://127.0.0.1:1/v1/chat/completions"), std::string::npos) << message;
    EXPECT_NE(message.find("after 3 attempts"), std::string::npos) << message;
    EXPECT_NE(message.find("stage plan"), std::string::npos) << message;
  }
}

TEST(OpenAIChat, IdentityNamesModelAndDefaults) {
  if (!built_with_http()) GTEST_SKIP() << "relmem was built without HTTP";
  OpenAIChatConfig config;
  config.base_url = "http://localhost:8000/v1";
  config.model = "llama3";
  config.temperature = 0.0;
  config.max_tokens = 256;
  EXPECT_EQ(OpenAIChat(config).identity(), "openai-chat model=llama3 temperature=0 max_tokens=256");
}

}  // namespace
}  // namespace relmem
