#include "relmem/sql/ast.hpp"

#include <algorithm>

#include "words.hpp"

namespace relmem::sql {

bool is_aggregate_call(const Expr& expr) {
  if (expr.kind != ExprKind::Function) return false;
  std::string name = to_lower(expr.op);
  if (name == "min" || name == "max") return expr.args.size() == 1;
  if (name == "count") return expr.args.size() <= 1;
  return name == "sum" || name == "avg" || name == "total" || name == "group_concat";
}

bool contains_aggregate(const Expr& expr) {
  if (is_aggregate_call(expr)) return true;
  for (const ExprPtr& arg : expr.args) {
    if (contains_aggregate(*arg)) return true;
  }
  return false;
}

namespace {

using RootVisitor = std::function<void(const Expr&)>;

void join_condition_roots(const std::vector<TableRef>& items, const RootVisitor& visit) {
  for (const TableRef& item : items) {
    join_condition_roots(item.group, visit);
    if (item.on) visit(*item.on);
  }
}

// The select's own expressions (not those of its CTEs or FROM subqueries), each as the root of its tree.
void for_each_root_expr(const Select& select, const RootVisitor& visit) {
  for (const SelectCore& core : select.cores) {
    for (const ResultColumn& column : core.columns) visit(*column.expr);
    join_condition_roots(core.from, visit);
    if (core.where) visit(*core.where);
    for (const ExprPtr& expr : core.group_by) visit(*expr);
    if (core.having) visit(*core.having);
    for (const OrderTerm& term : core.misplaced_order_by) visit(*term.expr);
    if (core.misplaced_limit) visit(*core.misplaced_limit);
    if (core.misplaced_offset) visit(*core.misplaced_offset);
  }
  for (const OrderTerm& term : select.order_by) visit(*term.expr);
  if (select.limit) visit(*select.limit);
  if (select.offset) visit(*select.offset);
}

// The CTE bodies and FROM subqueries of the select.
void for_each_from_select(const Select& select, const SelectVisitor& visit) {
  for (const Cte& cte : select.ctes) visit(*cte.select);
  std::function<void(const std::vector<TableRef>&)> items = [&](const std::vector<TableRef>& refs) {
    for (const TableRef& ref : refs) {
      if (ref.subquery) visit(*ref.subquery);
      items(ref.group);
    }
  };
  for (const SelectCore& core : select.cores) items(core.from);
}

void for_each_nested_select(const Expr& expr, const SelectVisitor& visit) {
  for (const ExprPtr& arg : expr.args) for_each_nested_select(*arg, visit);
  if (expr.select) for_each_select(*expr.select, visit);
}

}  // namespace

void for_each_expr(const Expr& expr, const ExprVisitor& visit) {
  visit(expr);
  for (const ExprPtr& arg : expr.args) for_each_expr(*arg, visit);
  if (expr.select) for_each_expr(*expr.select, visit);
}

void for_each_expr(const Select& select, const ExprVisitor& visit) {
  for_each_from_select(select, [&](const Select& inner) { for_each_expr(inner, visit); });
  for_each_root_expr(select, [&](const Expr& root) { for_each_expr(root, visit); });
}

void for_each_select(const Select& select, const SelectVisitor& visit) {
  visit(select);
  for_each_from_select(select, [&](const Select& inner) { for_each_select(inner, visit); });
  for_each_root_expr(select, [&](const Expr& root) { for_each_nested_select(root, visit); });
}

std::vector<const Expr*> literals(const Select& select) {
  std::vector<const Expr*> found;
  for_each_expr(select, [&](const Expr& expr) {
    if (expr.kind == ExprKind::Literal) found.push_back(&expr);
  });
  std::sort(found.begin(), found.end(),
            [](const Expr* a, const Expr* b) { return a->literal_index < b->literal_index; });
  return found;
}

}  // namespace relmem::sql
