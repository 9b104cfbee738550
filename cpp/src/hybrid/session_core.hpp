#pragma once
// Private to hybrid/: the state a HybridSession shares with its SQLite virtual-table modules and functions.
#include <sqlite3.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/hybrid/filler.hpp"
#include "relmem/hybrid/hybrid_session.hpp"

namespace relmem::hybrid {

using Values = std::unordered_map<std::string, nlohmann::json>;  // store key -> filled value

// A table of the user's database as the modules read it.
struct BaseTable {
  std::string name;                     // as stored
  std::vector<std::string> columns;     // as stored, in order
  std::vector<std::string> types;       // declared types
  std::vector<bool> unique;             // the column alone identifies a row
  std::vector<bool> indexed;            // an index (or the rowid) starts with the column: equality is cheap
  std::vector<int> key_indexes;         // into columns: what identifies a row to the LLM
  int64_t row_count = 0;
};

struct ColumnState {
  VirtualColumn declaration;
  AnswerSpec spec;
  std::string scope;
  std::unordered_map<std::string, int64_t> label_ids;  // reference columns: lowercased label -> id
};

struct TableState {
  VirtualTable declaration;  // key_columns resolved
  BaseTable base;
  std::vector<ColumnState> columns;
};

struct RelationState {
  VirtualRelation declaration;  // key_columns resolved
  BaseTable owner;
  int owner_id_index = -1;  // into owner.columns
  AnswerSpec spec;
  std::string scope;
  std::unordered_map<std::string, int64_t> label_ids;  // lowercased target label -> target id
};

struct FunctionState {
  std::string kind;  // map, match, qa
  std::string instruction;
  std::string domain;  // as written in SQL: "table.column", "a;b;c" or empty
  std::string scope;
};

// Things a run reached that are not filled yet.
struct Missing {
  struct Row {
    nlohmann::json shown;
    std::set<int> columns;  // into TableState::columns
  };
  std::map<int, std::map<std::string, Row>> table_rows;                // table index -> key -> row
  std::map<int, std::map<std::string, nlohmann::json>> relation_rows;  // relation index -> key -> shown
  std::map<std::string, std::map<std::string, nlohmann::json>> function_items;  // function scope -> key -> shown
  bool empty() const { return table_rows.empty() && relation_rows.empty() && function_items.empty(); }
};

struct SessionState {
  std::string database;
  sqlite3* db = nullptr;
  std::shared_ptr<Filler> filler;
  std::vector<TableState> tables;
  std::vector<RelationState> relations;
  std::map<std::string, FunctionState> functions;  // by scope
  std::unordered_map<std::string, Values> cache;   // scope -> values, loaded from the store on first use
  Missing missing;

  const Values& values(const std::string& scope);  // loads the scope from the store the first time
};

// The key of a row (canonical JSON of {key column: value}) and what the LLM is shown.
nlohmann::json row_key_object(const BaseTable& table, sqlite3_stmt* row, int first_column);
void set_result(sqlite3_context* context, const nlohmann::json& value);
nlohmann::json value_to_json(sqlite3_value* value);

// Registers the modules relmem_table and relmem_relation and the LLM functions on `state->db`.
void register_hybrid_modules(SessionState* state);
void register_llm_functions(SessionState* state);

}  // namespace relmem::hybrid
