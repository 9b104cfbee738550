#pragma once
// The fill store: a SQLite file of relmem's own (never a user's database) that keeps every value an LLM filled,
// with its provenance, so a later question needing the same rows pays no tokens.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace relmem::hybrid {

// One answered item: `key` identifies it within its scope (a JSON array of key values); `value` is null when the
// LLM gave none, and `reason` then says why ("missing from the answer twice", "not an allowed value: 'Blu'"...).
struct FillAnswer {
  std::string key;
  nlohmann::json value;
  std::string reason;
};

// The LLM request the answers came from.
struct FillProvenance {
  std::string model;        // the LLM's identity()
  std::string prompt_hash;  // SHA-256 of the messages
  std::string raw_answer;   // the LLM's text as it came
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::string created_at;   // UTC, set by the store
};

struct FillRecord {
  nlohmann::json value;
  std::string reason;
  FillProvenance provenance;
};

class FillStore {
 public:
  // Opens or creates `path` (parent folders included). Refuses a file that is another application's database.
  explicit FillStore(const std::string& path);
  ~FillStore();
  FillStore(const FillStore&) = delete;
  FillStore& operator=(const FillStore&) = delete;

  const std::string& path() const { return path_; }

  // Every stored value of a scope: key -> value (null values included, so they are not asked again).
  std::unordered_map<std::string, nlohmann::json> values(const std::string& scope) const;
  std::optional<FillRecord> record(const std::string& scope, const std::string& key) const;

  // Stores answers of one request in one transaction; a key already stored is replaced.
  void put(const std::string& scope, const std::vector<FillAnswer>& answers, const FillProvenance& provenance);

  int64_t size() const;      // stored values
  int64_t requests() const;  // stored requests
  std::vector<std::string> scopes() const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mutex_;
};

}  // namespace relmem::hybrid
