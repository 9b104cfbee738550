#include "relmem/memories/value_conditions.hpp"

#include <algorithm>

#include "relmem/sql/parser.hpp"
#include "relmem/sql/resolve.hpp"

namespace relmem {
namespace {

using sql::Expr;
using sql::ExprKind;

const Expr& without_collate(const Expr& expr) {
  return expr.kind == ExprKind::Collate && !expr.args.empty() ? without_collate(*expr.args[0]) : expr;
}

class ConditionFinder {
 public:
  ConditionFinder(const sql::Resolution& resolution) : resolution_(resolution) {}

  void visit(const Expr& expr) {
    if (expr.kind == ExprKind::Binary && (expr.op == "=" || expr.op == "==" || expr.op == "!=" || expr.op == "<>")) {
      const std::string op = expr.op == "==" ? "=" : expr.op == "<>" ? "!=" : expr.op;
      add(*expr.args[0], *expr.args[1], op);
      add(*expr.args[1], *expr.args[0], op);
    } else if (expr.kind == ExprKind::In && !expr.select) {
      for (size_t i = 1; i < expr.args.size(); ++i) add(*expr.args[0], *expr.args[i], expr.negated ? "NOT IN" : "IN");
    } else if (expr.kind == ExprKind::Like && (expr.op == "LIKE" || expr.op == "GLOB") && expr.args.size() >= 2) {
      add(*expr.args[0], *expr.args[1], (expr.negated ? "NOT " : "") + expr.op);
    }
  }

  std::vector<ValueCondition> conditions;

 private:
  bool is_string_literal(const Expr& e) const {
    return e.kind == ExprKind::Literal && e.literal_kind == sql::LiteralKind::String &&
           resolution_.binding(e) == nullptr;  // a double-quoted name SQLite reads as a column is no value
  }

  const sql::Binding* column_binding(const Expr& e) const {
    const bool names_column =
        e.kind == ExprKind::Column || (e.kind == ExprKind::Literal && e.literal_kind == sql::LiteralKind::String);
    if (!names_column) return nullptr;
    const sql::Binding* binding = resolution_.binding(e);
    if (!binding || binding->status != sql::BindingStatus::Resolved || !binding->table || !binding->column)
      return nullptr;
    return binding;
  }

  void add(const Expr& column_side, const Expr& value_side, const std::string& op) {
    const Expr& value = without_collate(value_side);
    if (!is_string_literal(value)) return;
    const sql::Binding* binding = column_binding(without_collate(column_side));
    if (!binding) return;
    conditions.push_back(ValueCondition{value.literal_index, binding->table->name, binding->column->name, op,
                                        value.value, value.start, value.end});
  }

  const sql::Resolution& resolution_;
};

}  // namespace

bool ValueCondition::pattern() const { return op.find("LIKE") != std::string::npos || op.find("GLOB") != std::string::npos; }

std::vector<ValueCondition> value_conditions(const std::string& sql_text, const Schema& schema) {
  const sql::Select select = sql::parse(sql_text);
  const sql::Resolution resolution(select, &schema);
  ConditionFinder finder(resolution);
  sql::for_each_expr(select, [&](const Expr& expr) { finder.visit(expr); });
  std::stable_sort(finder.conditions.begin(), finder.conditions.end(),
                   [](const ValueCondition& a, const ValueCondition& b) { return a.literal_index < b.literal_index; });
  return finder.conditions;
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
