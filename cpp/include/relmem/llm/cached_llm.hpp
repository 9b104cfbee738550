#pragma once
// A response cache on disk wrapping any LLM, so experiments are reproducible and cheap to rerun.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "relmem/llm/chat.hpp"

struct sqlite3;

namespace relmem {

// The cache key: SHA-256 (hex) of the canonical JSON of the LLM's identity(), the messages and the parameters
// (temperature, max_tokens, stop, stage).
std::string response_cache_key(const std::string& identity, const std::vector<ChatMessage>& messages,
                                const ChatParams& params);

class CachedLLM : public LLM {
 public:
  // Opens or creates the SQLite file at `path` (parent folders included) with its own read-write connection. Refuses
  // a file that is some other application's database, so a user database is never written to by mistake.
  CachedLLM(std::shared_ptr<LLM> inner, const std::string& path);
  ~CachedLLM() override;
  CachedLLM(const CachedLLM&) = delete;
  CachedLLM& operator=(const CachedLLM&) = delete;

  std::string identity() const override { return inner_->identity(); }
  const std::shared_ptr<LLM>& inner() const { return inner_; }
  const std::string& path() const { return path_; }

  int64_t hits() const;
  int64_t misses() const;
  int64_t size() const;  // stored responses

 protected:
  // A hit returns the stored text and the usage recorded when it was first asked, with cached = true. Failures of
  // the inner LLM are not stored.
  ChatResponse do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) override;

 private:
  std::shared_ptr<LLM> inner_;
  std::string path_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mutex_;  // guards db_ and the counters; never held while the inner LLM runs
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace relmem
