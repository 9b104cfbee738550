#include "relmem/hybrid/fill_store.hpp"

#include <sqlite3.h>

#include "../common/own_database.hpp"
#include "relmem/common.hpp"
#include "../common/sqlite_statement.hpp"

namespace relmem::hybrid {
namespace {

// PRAGMA application_id of relmem fill stores ("RLMF"), so a user's database is never mistaken for one.
constexpr int64_t kApplicationId = 0x524C4D46;

int64_t query_integer(sqlite3* db, const std::string& sql, const std::string& context) {
  SqliteStatement statement(db, sql, context);
  return statement.step() ? statement.integer(0) : 0;
}

nlohmann::json parse_stored(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, false);  // stored by put(): always valid; discarded -> null
}

}  // namespace

FillStore::FillStore(const std::string& path) : path_(path) {
  db_ = open_own_database(path_, kApplicationId, "fill store");
  const std::string context = "fill store " + path_;
  try {
    execute_sql(db_,
                "CREATE TABLE IF NOT EXISTS fill_requests (prompt_hash TEXT PRIMARY KEY, model TEXT NOT NULL,"
                " raw_answer TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
                " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))",
                context);
    execute_sql(db_,
                "CREATE TABLE IF NOT EXISTS fills (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
                " reason TEXT NOT NULL, prompt_hash TEXT NOT NULL REFERENCES fill_requests(prompt_hash),"
                " PRIMARY KEY (scope, key))",
                context);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

FillStore::~FillStore() { sqlite3_close(db_); }

std::unordered_map<std::string, nlohmann::json> FillStore::values(const std::string& scope) const {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement select(db_, "SELECT key, value FROM fills WHERE scope = ?", "fill store " + path_);
  select.bind(1, scope);
  std::unordered_map<std::string, nlohmann::json> out;
  while (select.step()) out.emplace(select.text(0), parse_stored(select.text(1)));
  return out;
}

std::optional<FillRecord> FillStore::record(const std::string& scope, const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement select(db_,
                         "SELECT f.value, f.reason, r.model, r.prompt_hash, r.raw_answer, r.prompt_tokens,"
                         " r.completion_tokens, r.created_at FROM fills f JOIN fill_requests r USING (prompt_hash)"
                         " WHERE f.scope = ? AND f.key = ?",
                         "fill store " + path_);
  select.bind(1, scope);
  select.bind(2, key);
  if (!select.step()) return std::nullopt;
  FillRecord record;
  record.value = parse_stored(select.text(0));
  record.reason = select.text(1);
  record.provenance = {select.text(2), select.text(3), select.text(4), select.integer(5), select.integer(6),
                       select.text(7)};
  return record;
}

void FillStore::put(const std::string& scope, const std::vector<FillAnswer>& answers,
                    const FillProvenance& provenance) {
  if (answers.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string context = "fill store " + path_;
  execute_sql(db_, "BEGIN IMMEDIATE", context);
  try {
    SqliteStatement request(db_,
                            "INSERT OR REPLACE INTO fill_requests (prompt_hash, model, raw_answer, prompt_tokens,"
                            " completion_tokens) VALUES (?, ?, ?, ?, ?)",
                            context);
    request.bind(1, provenance.prompt_hash);
    request.bind(2, provenance.model);
    request.bind(3, provenance.raw_answer);
    request.bind(4, provenance.prompt_tokens);
    request.bind(5, provenance.completion_tokens);
    request.step();
    SqliteStatement fill(db_, "INSERT OR REPLACE INTO fills (scope, key, value, reason, prompt_hash) VALUES (?, ?, ?, ?, ?)",
                         context);
    for (const auto& answer : answers) {
      fill.reset();
      fill.bind(1, scope);
      fill.bind(2, answer.key);
      fill.bind(3, answer.value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      fill.bind(4, answer.reason);
      fill.bind(5, provenance.prompt_hash);
      fill.step();
    }
    execute_sql(db_, "COMMIT", context);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

int64_t FillStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return query_integer(db_, "SELECT COUNT(*) FROM fills", "fill store " + path_);
}

int64_t FillStore::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return query_integer(db_, "SELECT COUNT(*) FROM fill_requests", "fill store " + path_);
}

std::vector<std::string> FillStore::scopes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement select(db_, "SELECT DISTINCT scope FROM fills ORDER BY scope", "fill store " + path_);
  std::vector<std::string> out;
  while (select.step()) out.push_back(select.text(0));
  return out;
}

}  // namespace relmem::hybrid
