#pragma once
// Asks an LLM for values, many items per request, checks them and keeps them in the fill store.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/hybrid/fill_store.hpp"
#include "relmem/hybrid/hybrid_schema.hpp"
#include "relmem/llm/chat.hpp"

namespace relmem::hybrid {

// What one answer must look like.
struct AnswerSpec {
  std::string name;                  // the column (fill) or "answer"
  FillType type = FillType::Text;
  bool list = false;                 // a list of values (relations, list answers)
  std::string meaning;
  std::vector<std::string> allowed;  // resolved domain; empty: free
  std::string allowed_from;          // "table.column" the allowed values come from, for the LLM and provenance
};

// One kind of request: fill columns of a table's rows, list related values per row, or evaluate an SQL function.
struct FillTask {
  std::string kind;  // "fill", "list", "map", "match" or "qa"
  std::string stage;  // the LLM stage the requests carry (token accounting)
  std::string database;
  std::string table;        // fill/list: the table whose rows the items are
  std::string relation;     // list: the relation's name
  std::string instruction;  // map/match/qa: the function's instruction; list: the relation's meaning
  std::vector<std::string> key_columns;  // fill/list: what identifies a row
  std::vector<AnswerSpec> answers;       // fill: one per column; other kinds: exactly one
  std::vector<std::string> scopes;       // parallel to answers: the fill-store scope of each
};

// One thing to answer: `shown` is what the LLM sees (key values of a row, function inputs, a group's rows) and
// `key` identifies it in the store (canonical JSON of `shown`).
struct FillItem {
  std::string key;
  nlohmann::json shown;
};

struct FillReport {
  int64_t requests = 0;  // LLM calls made (retries included)
  int64_t items = 0;     // items asked
  int64_t values = 0;    // non-null values obtained
  int64_t nulls = 0;     // values left null (unknown, garbled twice, wrong type, not allowed, LLM failure)
  int64_t failed_requests = 0;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::vector<std::string> problems;  // first few reasons, for traces
  void add(const FillReport& other);
  nlohmann::json to_json() const;
};

struct FillOutcome {
  std::vector<std::unordered_map<std::string, nlohmann::json>> values;  // per answer: key -> value (null too)
  FillReport report;
};

struct FillerOptions {
  int batch_size = 40;          // items per request
  int max_shown_allowed = 400;  // longer allowed lists are described, not listed
  int max_tokens = 0;           // per request; 0: the LLM's default
};

class Filler {
 public:
  Filler(std::shared_ptr<LLM> llm, std::shared_ptr<FillStore> store, FillerOptions options = {});

  // Asks for every item, options.batch_size per request. Items the answer skipped or garbled are asked once more;
  // what is still missing is stored as null with the reason. An LLM failure (timeout, HTTP error) is retried
  // once; its items then stay null for this call only, unstored, so a later question asks again.
  FillOutcome fill(const FillTask& task, const std::vector<FillItem>& items);

  const std::shared_ptr<FillStore>& store() const { return store_; }
  const std::shared_ptr<LLM>& llm() const { return llm_; }
  const FillerOptions& options() const { return options_; }

 private:
  std::shared_ptr<LLM> llm_;
  std::shared_ptr<FillStore> store_;
  FillerOptions options_;
};

// The canonical store key of shown key values or inputs.
std::string item_key(const nlohmann::json& shown);

}  // namespace relmem::hybrid
