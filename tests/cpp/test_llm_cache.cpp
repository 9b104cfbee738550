#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "relmem/llm/cached_llm.hpp"
#include "relmem/llm/callable_llm.hpp"
#include "relmem/llm/sha256.hpp"

namespace relmem {
namespace {

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("relmem_llm_cache_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    path_ = (folder_ / "nested" / "cache.sqlite").string();
    calls_ = std::make_shared<std::atomic<int>>(0);
    auto calls = calls_;
    counting_ = std::make_shared<CallableLLM>(
        [calls](const std::vector<ChatMessage>& messages, const ChatParams& params) {
          ++*calls;
          ChatResponse response;
          response.text = "answer " + std::to_string(calls->load()) + " to " + messages.back().content + " @" +
                          params.stage;
          response.usage = {10, 5, false};
          return response;
        },
        "counting");
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::filesystem::path folder_;
  std::string path_;
  std::shared_ptr<std::atomic<int>> calls_;
  std::shared_ptr<CallableLLM> counting_;
};

ChatParams with_stage(const std::string& stage) {
  ChatParams params;
  params.stage = stage;
  return params;
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_F(CacheTest, SecondAskIsAHitWithTheOriginalUsage) {
  CachedLLM cache(counting_, path_);
  const ChatResponse first = cache.chat({{"user", "q1"}}, with_stage("plan"));
  const ChatResponse second = cache.chat({{"user", "q1"}}, with_stage("plan"));
  EXPECT_EQ(*calls_, 1);
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.text, first.text);
  EXPECT_EQ(second.usage.prompt_tokens, 10);
  EXPECT_EQ(second.usage.completion_tokens, 5);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(cache.size(), 1);
}

TEST_F(CacheTest, PersistsAcrossInstances) {
  std::string text;
  {
    CachedLLM cache(counting_, path_);
    text = cache.chat({{"user", "q1"}}, with_stage("refine")).text;
  }
  CachedLLM reopened(counting_, path_);
  const ChatResponse again = reopened.chat({{"user", "q1"}}, with_stage("refine"));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.text, text);
  EXPECT_EQ(*calls_, 1);
  EXPECT_EQ(reopened.hits(), 1);
  EXPECT_EQ(reopened.misses(), 0);
}

TEST_F(CacheTest, AnyChangeInTheRequestIsAMiss) {
  CachedLLM cache(counting_, path_);
  cache.chat({{"user", "q1"}}, with_stage("plan"));
  cache.chat({{"user", "q2"}}, with_stage("plan"));
  cache.chat({{"system", "q1"}}, with_stage("plan"));
  cache.chat({{"user", "q1"}}, with_stage("refine"));
  ChatParams hot = with_stage("plan");
  hot.temperature = 0.7;
  cache.chat({{"user", "q1"}}, hot);
  ChatParams short_answer = with_stage("plan");
  short_answer.max_tokens = 5;
  cache.chat({{"user", "q1"}}, short_answer);
  ChatParams stopping = with_stage("plan");
  stopping.stop = {"End SQL"};
  cache.chat({{"user", "q1"}}, stopping);
  EXPECT_EQ(*calls_, 7);
  EXPECT_EQ(cache.hits(), 0);
  EXPECT_EQ(cache.size(), 7);
}

TEST_F(CacheTest, KeyDependsOnTheModelIdentity) {
  const std::vector<ChatMessage> messages = {{"user", "q"}};
  EXPECT_EQ(response_cache_key("a", messages, {}), response_cache_key("a", messages, {}));
  EXPECT_NE(response_cache_key("a", messages, {}), response_cache_key("b", messages, {}));
  EXPECT_EQ(response_cache_key("a", messages, {}).size(), 64u);
}

TEST_F(CacheTest, FailuresAreNotStored) {
  int calls = 0;
  auto flaky = std::make_shared<CallableLLM>([&calls](const std::vector<ChatMessage>&, const ChatParams&) {
    if (++calls == 1) throw Error("server down");
    return ChatResponse{"ok", {1, 1, false}, "stop", false};
  });
  CachedLLM cache(flaky, path_);
  EXPECT_THROW(cache.chat({{"user", "q"}}), Error);
  EXPECT_EQ(cache.size(), 0);
  EXPECT_EQ(cache.chat({{"user", "q"}}).text, "ok");
  EXPECT_EQ(cache.chat({{"user", "q"}}).text, "ok");
  EXPECT_EQ(calls, 2);
}

TEST_F(CacheTest, RefusesAnotherApplicationsDatabase) {
  std::filesystem::create_directories(folder_);
  const std::string user_db = (folder_ / "user.sqlite").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(user_db.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE singer(name TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    CachedLLM cache(counting_, user_db);
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a relmem response cache"), std::string::npos) << e.what();
  }
}

TEST_F(CacheTest, CorruptFileIsAClearError) {
  std::filesystem::create_directories(folder_);
  const std::string corrupt = (folder_ / "corrupt.sqlite").string();
  std::ofstream(corrupt) << std::string(4096, 'z');
  try {
    CachedLLM cache(counting_, corrupt);
    FAIL() << "expected relmem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(corrupt), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relmem
