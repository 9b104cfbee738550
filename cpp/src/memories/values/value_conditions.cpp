#include "relmem/memories/values/value_conditions.hpp"

#include "relmem/sql/conditions.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/resolve.hpp"

namespace relmem {

bool ValueCondition::pattern() const {
  return op.find("LIKE") != std::string::npos || op.find("GLOB") != std::string::npos;
}

std::vector<ValueCondition> value_conditions(const std::string& sql_text, const Schema& schema) {
  const sql::Select select = sql::parse(sql_text);
  const sql::Resolution resolution(select, &schema);
  std::vector<ValueCondition> out;
  for (const sql::Condition& c : sql::extract_conditions(select, resolution)) {
    const bool value_op = c.op == "=" || c.op == "!=" || c.op == "IN" || c.op == "NOT IN" || c.op == "LIKE" ||
                          c.op == "NOT LIKE" || c.op == "GLOB" || c.op == "NOT GLOB";
    if (!value_op || c.literal_kind != sql::LiteralKind::String) continue;
    const Table* table = schema.table(c.table);
    const Column* column = table ? table->column(c.column) : nullptr;
    if (!column) continue;  // an alias, a computed output or an unknown name: no stored values to compare with
    out.push_back(ValueCondition{c.literal_index, table->name, column->name, c.op, c.literal, c.start, c.end,
                                 c.column_start, c.column_end, c.comparison_start, c.comparison_end});
  }
  return out;
}

std::string pattern_text(const ValueCondition& condition) {
  if (!condition.pattern()) return condition.value;
  const bool like = condition.op.find("LIKE") != std::string::npos;
  std::string out;
  for (char c : condition.value) {
    const bool wildcard = like ? (c == '%' || c == '_') : (c == '*' || c == '?');
    out += wildcard ? ' ' : c;
  }
  const size_t first = out.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

}  // namespace relmem
