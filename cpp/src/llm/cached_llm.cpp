#include "relmem/llm/cached_llm.hpp"

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "../common/own_database.hpp"
#include "../common/sqlite_statement.hpp"
#include "relmem/llm/sha256.hpp"

namespace relmem {
namespace {

// PRAGMA application_id of relmem response caches ("RLMC"), so a user's database is never mistaken for one.
constexpr int64_t kApplicationId = 0x524C4D43;

std::string context(const std::string& path) { return "response cache " + path; }

int64_t query_integer(sqlite3* db, const std::string& sql, const std::string& path) {
  SqliteStatement statement(db, sql, context(path));
  return statement.step() ? statement.integer(0) : 0;
}

std::string canonical_request(const std::string& identity, const std::vector<ChatMessage>& messages,
                              const ChatParams& params) {
  nlohmann::json request = {{"llm", identity}, {"stage", params.stage}, {"stop", params.stop}};
  request["messages"] = nlohmann::json::array();
  for (const auto& m : messages) request["messages"].push_back({{"role", m.role}, {"content", m.content}});
  request["temperature"] = params.temperature ? nlohmann::json(*params.temperature) : nlohmann::json();
  request["max_tokens"] = params.max_tokens ? nlohmann::json(*params.max_tokens) : nlohmann::json();
  // Only when set, so that the keys of free-text requests stay what they were.
  if (!params.grammar.empty()) request["grammar"] = params.grammar;
  if (!params.json_schema.empty()) request["json_schema"] = params.json_schema;
  return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // keys sorted: canonical
}

}  // namespace

std::string response_cache_key(const std::string& identity, const std::vector<ChatMessage>& messages,
                               const ChatParams& params) {
  return sha256_hex(canonical_request(identity, messages, params));
}

CachedLLM::CachedLLM(std::shared_ptr<LLM> inner, const std::string& path) : inner_(std::move(inner)), path_(path) {
  if (!inner_) throw Error("CachedLLM needs an LLM");
  db_ = open_own_database(path_, kApplicationId, "response cache");
  try {
    execute_sql(db_,
            "CREATE TABLE IF NOT EXISTS llm_responses ("
            " key TEXT PRIMARY KEY, request TEXT NOT NULL, text TEXT NOT NULL, finish_reason TEXT NOT NULL,"
            " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, estimated INTEGER NOT NULL,"
            " created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
            context(path_));
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

CachedLLM::~CachedLLM() { sqlite3_close(db_); }

int64_t CachedLLM::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

int64_t CachedLLM::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

int64_t CachedLLM::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return query_integer(db_, "SELECT COUNT(*) FROM llm_responses", path_);
}

ChatResponse CachedLLM::do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  const std::string request = canonical_request(inner_->identity(), messages, params);
  const std::string key = sha256_hex(request);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SqliteStatement lookup(db_,
                           "SELECT text, finish_reason, prompt_tokens, completion_tokens, estimated FROM llm_responses "
                           "WHERE key = ?",
                           context(path_));
    lookup.bind(1, key);
    if (lookup.step()) {
      ++hits_;
      ChatResponse response;
      response.text = lookup.text(0);
      response.finish_reason = lookup.text(1);
      response.usage.prompt_tokens = lookup.integer(2);
      response.usage.completion_tokens = lookup.integer(3);
      response.usage.estimated = lookup.integer(4) != 0;
      response.cached = true;
      return response;
    }
    ++misses_;
  }
  ChatResponse response = inner_->chat(messages, params);
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement store(db_,
                        "INSERT OR REPLACE INTO llm_responses (key, request, text, finish_reason, prompt_tokens, "
                        "completion_tokens, estimated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        context(path_));
  store.bind(1, key);
  store.bind(2, request);
  store.bind(3, response.text);
  store.bind(4, response.finish_reason);
  store.bind(5, response.usage.prompt_tokens);
  store.bind(6, response.usage.completion_tokens);
  store.bind(7, static_cast<int64_t>(response.usage.estimated ? 1 : 0));
  store.step();
  return response;
}

}  // namespace relmem
