// Aggregates where SQLite refuses them, ORDER BY aggregates that collapse a query, and ungrouped columns.
#include <algorithm>

#include "checks.hpp"
#include "relmem/sql/render.hpp"
#include "words.hpp"

namespace relmem::sql::checks {
namespace {

// The first aggregate call in the expression outside subqueries, or nullptr.
const Expr* find_aggregate(const Expr& e) {
  if (is_aggregate_call(e)) return &e;
  for (const ExprPtr& arg : e.args) {
    if (const Expr* found = find_aggregate(*arg)) return found;
  }
  return nullptr;
}

// Column references outside aggregate calls and subqueries.
void bare_columns(const Expr& e, std::vector<const Expr*>& out) {
  if (is_aggregate_call(e)) return;
  if (e.kind == ExprKind::Column) out.push_back(&e);
  for (const ExprPtr& arg : e.args) bare_columns(*arg, out);
}

bool same_column(const Binding& a, const Binding& b) {
  return a.status == BindingStatus::Resolved && b.status == BindingStatus::Resolved && a.scope == b.scope &&
         a.source == b.source && iequals(a.column_name, b.column_name);
}

class AggregateChecker {
 public:
  AggregateChecker(const Query& query, Report& report) : resolution_(query.resolution()), report_(report) {}

  void check(const Select& select) {
    for (const SelectCore& core : select.cores) {
      misplaced(core);
      bool order_aggregates = false;
      if (select.cores.size() == 1) {
        for (const OrderTerm& term : select.order_by) order_aggregates |= contains_aggregate(*term.expr);
      }
      // Without GROUP BY, an ORDER BY aggregate alone is reported as aggregate_in_order_by instead.
      bool aggregates = (order_aggregates && !core.group_by.empty()) || (core.having && contains_aggregate(*core.having));
      for (const ResultColumn& column : core.columns) aggregates |= contains_aggregate(*column.expr);
      if (aggregates) ungrouped(core);
    }
    if (select.cores.size() == 1) order_by(select);
  }

 private:
  void misplaced(const SelectCore& core) {
    if (core.where) report_misplaced(*core.where, "WHERE", "; filter groups with HAVING");
    for (const ExprPtr& term : core.group_by) report_misplaced(*term, "GROUP BY", "");
    std::vector<const TableRef*> items;
    for (const TableRef& item : core.from) items.push_back(&item);
    for (size_t i = 0; i < items.size(); ++i) {
      for (const TableRef& inner : items[i]->group) items.push_back(&inner);
      if (items[i]->on) report_misplaced(*items[i]->on, "ON", "");
    }
  }

  void report_misplaced(const Expr& e, const std::string& clause, const std::string& advice) {
    if (const Expr* aggregate = find_aggregate(e)) {
      report_.add(DiagnosticKind::MisplacedAggregate, aggregate->start, aggregate->end,
                  "aggregate " + render(*aggregate) + " is not allowed in " + clause + advice);
    }
  }

  void ungrouped(const SelectCore& core) {
    std::vector<std::string> group_texts;
    for (const ExprPtr& term : core.group_by) group_texts.push_back(render(*term));
    for (const ResultColumn& column : core.columns) {
      if (column.expr->kind == ExprKind::Star) continue;
      std::string text = render(*column.expr);
      if (std::find(group_texts.begin(), group_texts.end(), text) != group_texts.end()) continue;
      std::vector<const Expr*> columns;
      bare_columns(*column.expr, columns);
      for (const Expr* bare : columns) {
        const Binding* binding = resolution_.binding(*bare);
        if (binding == nullptr || binding->status != BindingStatus::Resolved || binding->outer) continue;
        if (grouped(*binding, core)) continue;
        std::string name = render(*bare);
        report_.add(DiagnosticKind::UngroupedColumn, bare->start, bare->end,
                    core.group_by.empty()
                        ? name + " is not aggregated in a query that aggregates all rows into one; its value comes "
                                 "from an arbitrary row"
                        : name + " is neither grouped nor aggregated; its value comes from an arbitrary row of "
                                 "each group");
      }
    }
  }

  // In GROUP BY, or determined by it: the GROUP BY holds (directly or through a join equality) the whole primary
  // key of the column's table.
  bool grouped(const Binding& binding, const SelectCore& core) const {
    std::vector<const Binding*> terms;
    for (const ExprPtr& term : core.group_by) {
      const Binding* group = column_binding(resolution_, *term);
      if (group == nullptr) continue;
      if (same_column(binding, *group)) return true;
      terms.push_back(group);
    }
    size_t direct = terms.size();
    for (const ColumnEquality& equality : column_equalities(core, resolution_)) {
      for (size_t i = 0; i < direct; ++i) {
        if (same_column(*terms[i], *equality.left_binding)) terms.push_back(equality.right_binding);
        if (same_column(*terms[i], *equality.right_binding)) terms.push_back(equality.left_binding);
      }
    }
    const Table* table = binding.table;
    if (table == nullptr || binding.scope->sources[binding.source].table != table) return false;
    bool has_key = false;
    for (const Column& key : table->columns) {
      if (!key.primary_key) continue;
      has_key = true;
      bool found = std::any_of(terms.begin(), terms.end(), [&](const Binding* group) {
        return group->scope == binding.scope && group->source == binding.source &&
               iequals(group->column_name, key.name);
      });
      if (!found) return false;
    }
    return has_key;
  }

  void order_by(const Select& select) {
    const SelectCore& core = select.cores.front();
    if (!core.group_by.empty() || (core.having && contains_aggregate(*core.having))) return;
    for (const ResultColumn& column : core.columns) {
      if (contains_aggregate(*column.expr)) return;
    }
    for (const OrderTerm& term : select.order_by) {
      if (const Expr* aggregate = find_aggregate(*term.expr)) {
        report_.add(DiagnosticKind::AggregateInOrderBy, aggregate->start, aggregate->end,
                    "ORDER BY " + render(*aggregate) +
                        " without GROUP BY aggregates the whole query into a single row; add GROUP BY");
        return;
      }
    }
  }

  const Resolution& resolution_;
  Report& report_;
};

}  // namespace

void check_aggregates(const Query& query, Report& report) {
  AggregateChecker checker(query, report);
  for_each_select(query.select(), [&](const Select& select) { checker.check(select); });
}

}  // namespace relmem::sql::checks
