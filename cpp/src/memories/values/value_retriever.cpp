#include "relmem/memories/values/value_retriever.hpp"

#include <sstream>

namespace relmem {
namespace {

std::vector<std::string> stored_matches(const Catalog& catalog, const std::string& db, const ValueCondition& c,
                                        const std::string& comparison, int limit) {
  const std::string column = quote_identifier(c.column);
  const std::string sql = "SELECT " + column + " FROM " + quote_identifier(c.table) + " WHERE " + comparison +
                          " GROUP BY " + column + " ORDER BY count(*) DESC LIMIT " + std::to_string(limit);
  const QueryResult result = catalog.execute(db, sql, ExecOptions{30.0, limit});
  if (!result.ok()) throw Error("checking " + db + "." + c.table + "." + c.column + ": " + result.error->message);
  std::vector<std::string> out;
  for (const auto& row : result.rows) out.push_back(value_to_string(row[0]));
  return out;
}

std::string ascii_lower(std::string text) {
  for (char& ch : text)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return text;
}

// The memory answers for itself when it holds every value of a text-only column of an unchanged file; otherwise
// (a capped column, numbers that SQLite would compare by affinity, a file changed since) the database does.
bool memory_is_complete(const DatabaseValues* values, const std::string& db, const ValueCondition& c,
                        const Catalog& catalog) {
  const ColumnValues* column = values ? values->find_column(c.table, c.column) : nullptr;
  if (!column || c.pattern() || column->kind != ColumnKind::Text || column->truncated || column->skipped_long > 0 ||
      !std::holds_alternative<std::monostate>(column->min))
    return false;
  return values->path == catalog.path(db) && values->stamp == stamp_file(values->path);
}

ValueStatus status_from_memory(const DatabaseValues& values, const ValueCondition& c,
                               std::vector<std::string>& case_matches) {
  const ColumnValues& column = *values.find_column(c.table, c.column);
  const std::string lowered = ascii_lower(c.value);
  for (uint32_t id = column.first; id < column.first + column.count; ++id) {
    if (values.values[id] == c.value) return ValueStatus::Found;
    if (case_matches.size() < 5 && ascii_lower(values.values[id]) == lowered) case_matches.push_back(values.values[id]);
  }
  return case_matches.empty() ? ValueStatus::NotFound : ValueStatus::FoundIgnoringCase;
}

ValueStatus stored_status(const Catalog& catalog, const std::string& db, const ValueCondition& c,
                          std::vector<std::string>& case_matches) {
  const std::string column = quote_identifier(c.column), literal = quote_string(c.value);
  if (c.pattern()) {
    const std::string op = c.op.find("LIKE") != std::string::npos ? " LIKE " : " GLOB ";
    return stored_matches(catalog, db, c, column + op + literal, 1).empty() ? ValueStatus::NotFound
                                                                            : ValueStatus::Found;
  }
  if (!stored_matches(catalog, db, c, column + " = " + literal, 1).empty()) return ValueStatus::Found;
  case_matches = stored_matches(
      catalog, db, c, "typeof(" + column + ") = 'text' AND lower(" + column + ") = lower(" + literal + ")", 5);
  return case_matches.empty() ? ValueStatus::NotFound : ValueStatus::FoundIgnoringCase;
}

std::string quoted(const std::string& value) { return "'" + value + "'"; }

}  // namespace

std::string value_status_name(ValueStatus status) {
  switch (status) {
    case ValueStatus::Found:
      return "found";
    case ValueStatus::FoundIgnoringCase:
      return "found_ignoring_case";
    case ValueStatus::NotFound:
      return "not_found";
  }
  return "not_found";
}

std::vector<ValueCheck> check_values(const std::string& sql, const std::string& db, const Catalog& catalog,
                                     const ValueMemory& memory, int k) {
  std::vector<ValueCheck> checks;
  const auto values = memory.find_database(db);  // one snapshot for all conditions, whatever other threads update
  for (auto& condition : value_conditions(sql, catalog.schema(db))) {
    ValueCheck check;
    check.condition = std::move(condition);
    check.status = memory_is_complete(values.get(), db, check.condition, catalog)
                       ? status_from_memory(*values, check.condition, check.case_matches)
                       : stored_status(catalog, db, check.condition, check.case_matches);
    const ColumnValues* column = values ? values->find_column(check.condition.table, check.condition.column) : nullptr;
    const bool has_values = column && (column->kind == ColumnKind::Text || column->kind == ColumnKind::Date ||
                                       column->kind == ColumnKind::Numeric);
    if (check.status == ValueStatus::NotFound && has_values && k > 0) {
      const std::string written = pattern_text(check.condition);
      if (!written.empty())
        check.similar = memory.lookup(db, check.condition.table, check.condition.column, written, k);
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

std::string value_feedback(const std::vector<ValueCheck>& checks) {
  std::ostringstream out;
  for (const auto& check : checks) {
    const ValueCondition& c = check.condition;
    const std::string where = c.table + "." + c.column;
    if (check.status == ValueStatus::FoundIgnoringCase) {
      out << "Value " << quoted(c.value) << " not found in " << where << " as written; stored with other letter case: ";
      for (size_t i = 0; i < check.case_matches.size(); ++i) out << (i ? ", " : "") << quoted(check.case_matches[i]);
      out << ".\n";
    } else if (check.status == ValueStatus::NotFound) {
      out << (c.pattern() ? "Pattern " : "Value ") << quoted(c.value)
          << (c.pattern() ? " matches nothing in " : " not found in ") << where;
      if (check.similar.empty()) {
        out << ".\n";
        continue;
      }
      out << "; similar stored values: ";
      for (size_t i = 0; i < check.similar.size(); ++i) out << (i ? ", " : "") << quoted(check.similar[i].value);
      out << ".\n";
    }
  }
  return out.str();
}

}  // namespace relmem
