#pragma once
// A scripted LLM for hybrid queries that answers from the original databases (the ones whose columns were dropped),
// with a configurable share of wrong values. It measures relmem's machinery — batching, parsing, caching, lazy
// filling, factuality scoring — never an LLM's knowledge. It answers only the fill requests relmem's hybrid
// layer sends (it reads their JSON payload) and refuses everything else. It looks values up by the request's key
// values; it keeps no answers per question. Token counts: about 4 characters per token (estimate_usage).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "relmem/llm/chat.hpp"

namespace relmem::evaluation {

struct OracleSource {
  std::string database;  // as named in requests
  std::string path;      // the original database file (opened read-only)
  // For SQL functions (llm_map & co.), whose requests name no column: the dropped columns ("table.column") and
  // relations ("hero_power") an instruction may be about, with one-line meanings, and each table's key columns.
  std::map<std::string, std::string> dropped;
  std::map<std::string, std::vector<std::string>> keys;
};

struct OracleOptions {
  double error_rate = 0.0;  // share of non-null values answered wrong
  uint64_t seed = 13;
};

class OracleFiller : public LLM {
 public:
  OracleFiller(std::vector<OracleSource> sources, OracleOptions options = {});
  ~OracleFiller() override;

  std::string identity() const override;

  // Calls answered, and function items it could not tie to a dropped column (answered null).
  int64_t calls() const;
  int64_t unanswered_items() const;

 protected:
  ChatResponse do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  mutable std::mutex mutex_;
};

}  // namespace relmem::evaluation
