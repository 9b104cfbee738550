#include "relmem/memories/values/value_aliases.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "../../common/ascii_case.hpp"
#include "../../common/new_file.hpp"
#include "relmem/common.hpp"
#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

using nlohmann::json;
constexpr const char* kFormat = "relmem-value-aliases";
constexpr int kVersion = 1;

std::string written_key(const std::string& written) { return compact_value(normalize_value(written)); }

bool same_column(const ValueAlias& a, const std::string& db, const std::string& table, const std::string& column) {
  return a.db == db && to_lower(a.table) == to_lower(table) && to_lower(a.column) == to_lower(column);
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

json to_json(const ValueAlias& a) {
  return json{{"db", a.db},         {"table", a.table},       {"column", a.column},   {"written", a.written},
              {"stored", a.stored}, {"source", a.source},     {"evidence", a.evidence}, {"created", a.created},
              {"uses", a.uses}};
}

ValueAlias from_json(const json& j) {
  ValueAlias a;
  a.db = j.at("db").get<std::string>();
  a.table = j.at("table").get<std::string>();
  a.column = j.at("column").get<std::string>();
  a.written = j.at("written").get<std::string>();
  a.stored = j.at("stored").get<std::string>();
  a.source = j.value("source", "");
  a.evidence = j.value("evidence", "");
  a.created = j.value("created", "");
  a.uses = j.value("uses", 1);
  return a;
}

}  // namespace

ValueAliases::ValueAliases() : mutex_(std::make_unique<std::shared_mutex>()) {}
ValueAliases::ValueAliases(ValueAliases&&) noexcept = default;
ValueAliases& ValueAliases::operator=(ValueAliases&&) noexcept = default;
ValueAliases::~ValueAliases() = default;

ValueAlias ValueAliases::add(ValueAlias alias) {
  if (alias.db.empty() || alias.table.empty() || alias.column.empty())
    throw Error("an alias needs a database, a table and a column");
  if (written_key(alias.written).empty()) throw Error("an alias needs a written value with letters or digits");
  if (alias.stored.empty()) throw Error("an alias needs the stored value it means");
  if (alias.created.empty()) alias.created = utc_now();
  std::unique_lock lock(*mutex_);
  const std::string key = written_key(alias.written);
  for (auto& kept : aliases_) {
    if (!same_column(kept, alias.db, alias.table, alias.column) || written_key(kept.written) != key) continue;
    alias.uses = kept.uses + 1;
    alias.created = kept.created;
    kept = std::move(alias);
    return kept;
  }
  alias.uses = std::max(alias.uses, 1);
  aliases_.push_back(std::move(alias));
  return aliases_.back();
}

bool ValueAliases::remove(const std::string& db, const std::string& table, const std::string& column,
                          const std::string& written) {
  std::unique_lock lock(*mutex_);
  const std::string key = written_key(written);
  for (auto it = aliases_.begin(); it != aliases_.end(); ++it) {
    if (same_column(*it, db, table, column) && written_key(it->written) == key) {
      aliases_.erase(it);
      return true;
    }
  }
  return false;
}

size_t ValueAliases::clear(const std::string& db, const std::string& table, const std::string& column) {
  std::unique_lock lock(*mutex_);
  const size_t before = aliases_.size();
  aliases_.erase(std::remove_if(aliases_.begin(), aliases_.end(), [&](const ValueAlias& a) {
                   return a.db == db && (table.empty() || same_column(a, db, table, column));
                 }),
                 aliases_.end());
  return before - aliases_.size();
}

std::unique_ptr<ValueAlias> ValueAliases::find(const std::string& db, const std::string& table,
                                               const std::string& column, const std::string& written) const {
  std::shared_lock lock(*mutex_);
  const std::string key = written_key(written);
  for (const auto& a : aliases_)
    if (same_column(a, db, table, column) && written_key(a.written) == key) return std::make_unique<ValueAlias>(a);
  return nullptr;
}

std::vector<ValueAlias> ValueAliases::find_in_database(const std::string& db, const std::string& written) const {
  std::shared_lock lock(*mutex_);
  const std::string key = written_key(written);
  std::vector<ValueAlias> out;
  for (const auto& a : aliases_)
    if (a.db == db && written_key(a.written) == key) out.push_back(a);
  return out;
}

std::vector<ValueAlias> ValueAliases::list(const std::string& db, const std::string& table,
                                           const std::string& column) const {
  std::shared_lock lock(*mutex_);
  std::vector<ValueAlias> out;
  for (const auto& a : aliases_) {
    if (!db.empty() && a.db != db) continue;
    if (!table.empty() && to_lower(a.table) != to_lower(table)) continue;
    if (!column.empty() && to_lower(a.column) != to_lower(column)) continue;
    out.push_back(a);
  }
  return out;
}

size_t ValueAliases::size() const {
  std::shared_lock lock(*mutex_);
  return aliases_.size();
}

void ValueAliases::save(const std::string& path) const {
  json list = json::array();
  {
    std::shared_lock lock(*mutex_);
    for (const auto& a : aliases_) list.push_back(to_json(a));
  }
  const json file{{"format", kFormat}, {"version", kVersion}, {"aliases", list}};
  write_file_atomically(path, file.dump(2, ' ', false, json::error_handler_t::replace) + "\n", "value alias");
}

ValueAliases ValueAliases::load(const std::string& path) {
  ValueAliases aliases;
  std::ifstream in(path);
  if (!in) return aliases;
  try {
    const json file = json::parse(in);
    if (file.at("format").get<std::string>() != kFormat || file.at("version").get<int>() != kVersion)
      throw Error(path + " is not a relmem value alias file of version " + std::to_string(kVersion));
    for (const auto& entry : file.at("aliases")) aliases.aliases_.push_back(from_json(entry));
  } catch (const json::exception& e) {
    throw Error("corrupt " + path + ": " + e.what());
  }
  return aliases;
}

std::string aliases_path(const std::string& folder) {
  return (std::filesystem::path(folder) / "aliases.json").string();
}

}  // namespace relmem
