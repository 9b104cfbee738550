#pragma once
// Hybrid queries: SQL over a database extended with LLM-filled virtual columns and relations, and with LLM
// functions (llm_map, llm_map_in, llm_qa, llm_qa_in, llm_match). The user's database is opened read-only and never
// written; filled values live in the fill store. Generated SQL runs under the same authorizer as execute_readonly
// (no writes, no ATTACH, no PRAGMA): only relmem's own code creates the TEMP virtual tables that join the fills in.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/catalog/executor.hpp"
#include "relmem/hybrid/filler.hpp"
#include "relmem/hybrid/hybrid_schema.hpp"

namespace relmem::hybrid {

enum class FillMode {
  Lazy,   // fill only the rows the query reaches (its ordinary predicates are evaluated first)
  Whole,  // HQDL: a virtual column the query touches is filled for every row of its table
};

struct HybridOptions {
  FillMode mode = FillMode::Lazy;
  ExecOptions exec;    // per round
  int max_rounds = 12;  // query runs; each round fills what the previous one reached
};

struct HybridStats {
  int rounds = 0;
  FillReport fills;                       // everything asked of the LLM by this query
  std::map<std::string, FillReport> by_kind;  // "fill", "list", "map", "match", "qa"
  nlohmann::json requests = nlohmann::json::array();  // trace: one entry per fill call
  nlohmann::json to_json() const;
};

struct HybridResult {
  QueryResult result;
  HybridStats stats;
};

class HybridSession {
 public:
  // Opens `db_path` read-only and prepares the declared extensions: key columns are resolved (the declared ones
  // that exist, else the primary key plus the most descriptive text columns) and completed until they identify
  // each row. Throws relmem::Error on unknown tables/columns and unreadable files.
  HybridSession(std::string database, const std::string& db_path, HybridSchema schema,
                std::shared_ptr<Filler> filler, HybridOptions options = {});
  ~HybridSession();
  HybridSession(const HybridSession&) = delete;
  HybridSession& operator=(const HybridSession&) = delete;

  // Runs one read-only SELECT/WITH. Rounds: run the query; every virtual value or function result it reached that
  // is not stored yet reads as NULL and is noted; fill the noted ones in batches; run again, until a run reaches
  // nothing new. The last run's result is exact: everything it read was filled.
  HybridResult execute(const std::string& sql);

  // HQDL's baseline: fills every row of every declared virtual column and relation.
  FillReport fill_all();

  // Fills the given rows of `target` (a table with virtual columns, or a relation), each row identified by its key
  // values ({key column: value}, schema()'s resolved key columns), for the named virtual columns (ignored for a
  // relation) that the fill store lacks; each row's key travels once. For callers that know which rows they will
  // read (warming a store; the SWAN bench's foresight floor). Throws relmem::Error on unknown names.
  FillReport prefill(const std::string& target, const std::vector<nlohmann::json>& keys,
                     const std::vector<std::string>& columns);

  const HybridSchema& schema() const;  // as declared, with resolved key columns
  const std::string& database() const;
  HybridOptions& options();

 private:
  struct Core;
  std::unique_ptr<Core> core_;
};

}  // namespace relmem::hybrid
