#include "relmem/memories/values/key_lookup.hpp"

#include <map>

#include "../../common/ascii_case.hpp"
#include "../../sql/splice.hpp"
#include "relmem/common.hpp"

namespace relmem {
namespace {

std::vector<std::string> column_values(const Catalog& catalog, const std::string& db, const std::string& sql) {
  const QueryResult result = catalog.execute(db, sql, ExecOptions{30.0, 100000});
  if (!result.ok()) throw Error("looking up keys in " + db + ": " + result.error->message);
  std::vector<std::string> out;
  for (const auto& row : result.rows) out.push_back(value_to_string(row[0]));
  return out;
}

}  // namespace

std::optional<KeyLookup> find_key_lookup(const ValueCondition& condition, const std::string& db,
                                         const Catalog& catalog) {
  if (condition.op != "=" && condition.op != "!=") return std::nullopt;
  const Schema& schema = catalog.schema(db);
  const Table* table = schema.table(condition.table);
  if (!table) return std::nullopt;
  const ForeignKey* key = nullptr;
  for (const auto& candidate : table->foreign_keys) {
    if (!iequals(candidate.from_column, condition.column)) continue;
    if (key) return std::nullopt;  // part of several keys
    key = &candidate;
  }
  const Table* target = key ? schema.table(key->to_table) : nullptr;
  if (!target) return std::nullopt;
  KeyLookup lookup{condition, target->name, referenced_column(*key, *target), ""};
  if (lookup.key.empty() || !target->column(lookup.key)) return std::nullopt;
  std::vector<std::string> keys;
  for (const auto& column : target->columns) {
    if (iequals(column.name, lookup.key) || !is_text_type(column.type)) continue;
    std::vector<std::string> named =
        column_values(catalog, db,
                      "SELECT " + quote_identifier(lookup.key) + " FROM " + quote_identifier(target->name) + " WHERE " +
                          quote_identifier(column.name) + " = " + quote_string(condition.value) + " ORDER BY 1");
    if (named.empty()) continue;
    if (lookup.column.empty()) {
      lookup.column = column.name;
      keys = std::move(named);
    } else if (named != keys) {
      return std::nullopt;  // the literal names different rows in different columns
    }
  }
  if (lookup.column.empty()) return std::nullopt;
  return lookup;
}

KeyLookupRewrite apply_key_lookups(const std::string& sql, const Schema& schema,
                                   const std::vector<KeyLookup>& lookups) {
  KeyLookupRewrite result;
  std::map<int, const KeyLookup*> by_literal;
  for (const auto& lookup : lookups) by_literal[lookup.condition.literal_index] = &lookup;
  std::vector<sql::TextEdit> edits;  // in source order, as value_conditions gives the conditions
  for (const auto& condition : value_conditions(sql, schema)) {
    const auto it = by_literal.find(condition.literal_index);
    if (it == by_literal.end()) continue;
    const KeyLookup& lookup = *it->second;
    if (condition.op != lookup.condition.op || condition.value != lookup.condition.value) continue;
    const std::string column = sql.substr(condition.column_start, condition.column_end - condition.column_start);
    edits.push_back({condition.comparison_start, condition.comparison_end,
                     column + (condition.op == "=" ? " IN" : " NOT IN") + " (SELECT " + quote_identifier(lookup.key) +
                         " FROM " + quote_identifier(lookup.table) + " WHERE " + quote_identifier(lookup.column) +
                         " = " + quote_string(condition.value) + ")"});
    result.applied.push_back(lookup);
  }
  result.sql = sql::splice(sql, edits);
  return result;
}

}  // namespace relmem
