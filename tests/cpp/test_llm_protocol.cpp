#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "relmem/llm/openai_protocol.hpp"

namespace relmem {
namespace {

const std::vector<ChatMessage> kMessages = {{"system", "You write SQL."}, {"user", "How many singers?"}};

std::string error_of(long status, const std::string& body) {
  try {
    parse_chat_response(status, body, kMessages);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ChatCompletionsUrl, AppendsThePathOnce) {
  EXPECT_EQ(chat_completions_url("http://localhost:8000/v1"), "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(chat_completions_url("http://localhost:8000/v1/"), "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(chat_completions_url("https://x.org/v1/chat/completions"), "https://x.org/v1/chat/completions");
  EXPECT_THROW(chat_completions_url(""), Error);
}

TEST(BuildChatRequest, CarriesModelMessagesAndSetParameters) {
  ChatParams params;
  params.temperature = 0.25;
  params.max_tokens = 64;
  params.stop = {"End SQL"};
  params.stage = "plan";
  const auto body = nlohmann::json::parse(build_chat_request("qwen2.5", kMessages, params));
  EXPECT_EQ(body["model"], "qwen2.5");
  EXPECT_EQ(body["stream"], false);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["content"], "How many singers?");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.25);
  EXPECT_EQ(body["max_tokens"], 64);
  EXPECT_EQ(body["stop"], nlohmann::json::array({"End SQL"}));
  EXPECT_FALSE(body.contains("stage"));  // the stage travels in a header, not in the OpenAI body
}

TEST(BuildChatRequest, LeavesUnsetParametersOut) {
  const auto body = nlohmann::json::parse(build_chat_request("m", kMessages, {}));
  EXPECT_FALSE(body.contains("temperature"));
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_FALSE(body.contains("stop"));
}

TEST(BuildChatRequest, EscapesQuotesAndSurvivesInvalidUtf8) {
  const std::vector<ChatMessage> messages = {{"user", "name = \"O'Neil\"\n\xff\xfe end"}};
  const auto body = nlohmann::json::parse(build_chat_request("m", messages, {}));
  const std::string content = body["messages"][0]["content"];
  EXPECT_NE(content.find("\"O'Neil\"\n"), std::string::npos);
  EXPECT_NE(content.find(" end"), std::string::npos);
}

TEST(ParseChatResponse, ReadsTextUsageAndFinishReason) {
  const std::string body = R"json({"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"(YES)"},
    "finish_reason":"length"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}})json";
  const ChatResponse response = parse_chat_response(200, body, kMessages);
  EXPECT_EQ(response.text, "(YES)");
  EXPECT_EQ(response.finish_reason, "length");
  EXPECT_EQ(response.usage.prompt_tokens, 12);
  EXPECT_EQ(response.usage.completion_tokens, 3);
  EXPECT_FALSE(response.usage.estimated);
  EXPECT_FALSE(response.cached);
}

TEST(ParseChatResponse, EstimatesUsageWhenTheServerSendsNone) {
  const ChatResponse response =
      parse_chat_response(200, R"({"choices":[{"message":{"content":"12345678"}}]})", kMessages);
  EXPECT_TRUE(response.usage.estimated);
  EXPECT_EQ(response.usage.completion_tokens, 2);
  EXPECT_EQ(response.usage.prompt_tokens, estimate_tokens("You write SQL.") + estimate_tokens("How many singers?"));
  EXPECT_EQ(response.finish_reason, "stop");
}

TEST(ParseChatResponse, MalformedBodiesNameTheStatusAndQuoteTheBody) {
  std::string message = error_of(200, "{\"choices\": [{\"message\": ");
  EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("HTTP 200"), std::string::npos) << message;
  EXPECT_NE(message.find("{\"choices\": [{\"message\":"), std::string::npos) << message;

  message = error_of(200, R"({"object":"chat.completion"})");
  EXPECT_NE(message.find("no choices"), std::string::npos) << message;
  EXPECT_NE(message.find("chat.completion"), std::string::npos) << message;
  EXPECT_NE(error_of(200, R"({"choices":[]})").find("no choices"), std::string::npos);
  EXPECT_NE(error_of(200, R"({"choices":[{"message":{"content":null}}]})").find("no text"), std::string::npos);
  EXPECT_NE(error_of(200, R"({"choices":[{"text":"hi"}]})").find("no message"), std::string::npos);
  EXPECT_NE(error_of(200, "[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(200, "").find("<empty body>"), std::string::npos);
}

TEST(BodySnippet, OneLineValidUtf8AndBounded) {
  EXPECT_EQ(body_snippet("a\nb\tc"), "a b c");
  EXPECT_EQ(body_snippet(std::string(400, 'x'), 10), "xxxxxxxxxx...");
  EXPECT_EQ(body_snippet("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(body_snippet("bad \xff\xc3( end"), "bad ?" "?( end");
  EXPECT_EQ(body_snippet("\xed\xa0\x80"), "???");  // an encoded surrogate is not UTF-8
  EXPECT_EQ(body_snippet("caf\xc3\xa9", 4), "caf\xc3\xa9");  // a character is never split by the limit
  EXPECT_EQ(body_snippet("caf\xc3"), "caf?");               // a body cut mid-character
}

}  // namespace
}  // namespace relmem
