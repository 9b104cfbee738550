#pragma once
// What the value memory has learned: confirmed mappings from a written value to the stored value it means, per
// column ("Big Apple" -> 'NYC' in city), each with its provenance. A lookup tries them first. Kept in the value
// memory's folder as aliases.json, a file of its own so it can be edited without rewriting the memory.
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace relmem {

struct ValueAlias {
  std::string db;
  std::string table;
  std::string column;
  std::string written;  // as a question, a user or an LLM wrote it
  std::string stored;   // the stored value it means, byte for byte
  std::string source;   // who confirmed it: "user", "llm_correction" (accepted and the query returned rows), ...
  std::string evidence;  // what it was learned from (a question, the SQL before and after), free text
  std::string created;   // UTC, ISO 8601
  int uses = 0;          // times it was confirmed again
};

// Thread-safe: lookups may run while an alias is added.
class ValueAliases {
 public:
  ValueAliases();
  ValueAliases(ValueAliases&&) noexcept;
  ValueAliases& operator=(ValueAliases&&) noexcept;
  ~ValueAliases();

  // Adds or confirms again (same db, table, column and written value after normalization: counts a use and takes
  // the new stored value, source and evidence). `created` is filled in when empty. Returns the alias as kept.
  ValueAlias add(ValueAlias alias);
  // Removes the alias of one written value (normalized comparison); false when there was none.
  bool remove(const std::string& db, const std::string& table, const std::string& column, const std::string& written);
  // Removes every alias of a database (or of one of its columns when table and column are given); returns how many.
  size_t clear(const std::string& db, const std::string& table = "", const std::string& column = "");
  // The alias of a written value in one column; names compare case-insensitively, values after normalization.
  std::unique_ptr<ValueAlias> find(const std::string& db, const std::string& table, const std::string& column,
                                   const std::string& written) const;
  // Every alias of a database whose written value normalizes to `written` (any column).
  std::vector<ValueAlias> find_in_database(const std::string& db, const std::string& written) const;
  // Aliases filtered by the names that are not empty, in the order they were added.
  std::vector<ValueAlias> list(const std::string& db = "", const std::string& table = "",
                               const std::string& column = "") const;
  size_t size() const;

  // aliases.json: {"format": "relmem-value-aliases", "version": 1, "aliases": [...]}. Written to a temporary file
  // and renamed, so a reader never sees half a file.
  void save(const std::string& path) const;
  // An absent file is an empty set; a corrupt one is an error that names it.
  static ValueAliases load(const std::string& path);

 private:
  std::vector<ValueAlias> aliases_;
  std::unique_ptr<std::shared_mutex> mutex_;
};

// Where a value memory folder keeps its aliases.
std::string aliases_path(const std::string& folder);

}  // namespace relmem
