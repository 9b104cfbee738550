// UNION / INTERSECT / EXCEPT parts that SQLite cannot combine.
#include "checks.hpp"
#include "words.hpp"

namespace relmem::sql::checks {
namespace {

// The number of result columns, or -1 when a * covers a FROM item whose columns are unknown.
int column_count(const SelectCore& core, const Resolution& resolution) {
  const Scope* scope = resolution.scope(core);
  int count = 0;
  for (const ResultColumn& column : core.columns) {
    if (column.expr->kind != ExprKind::Star) {
      ++count;
      continue;
    }
    for (const Source& source : scope->sources) {
      if (!column.expr->table.empty() && !iequals(source.name, column.expr->table.text)) continue;
      if (!source.columns_known) return -1;
      count += static_cast<int>(source.table ? source.table->columns.size() : source.columns.size());
    }
  }
  return count;
}

void check_select(const Select& select, const Resolution& resolution, Report& report) {
  for (const SelectCore& core : select.cores) {
    if (!core.misplaced_order_by.empty() || core.misplaced_limit) {
      const Expr& first = core.misplaced_order_by.empty() ? *core.misplaced_limit : *core.misplaced_order_by[0].expr;
      const Expr& last = core.misplaced_offset  ? *core.misplaced_offset
                         : core.misplaced_limit ? *core.misplaced_limit
                                                : *core.misplaced_order_by.back().expr;
      report.add(DiagnosticKind::MisplacedOrderBy, first.start, last.end,
                 "ORDER BY and LIMIT may only follow the last SELECT of a compound query; wrap this part in a "
                 "subquery: SELECT * FROM (...)");
    }
  }
  if (select.cores.size() < 2) return;
  int expected = column_count(select.cores.front(), resolution);
  for (size_t i = 1; i < select.cores.size(); ++i) {
    int count = column_count(select.cores[i], resolution);
    if (expected < 0 || count < 0 || count == expected) continue;
    const SelectCore& core = select.cores[i];
    report.add(DiagnosticKind::CompoundColumnCount, core.start, core.end,
               select.compound_ops[i - 1] + " combines SELECTs of " + std::to_string(expected) + " and " +
                   std::to_string(count) + " columns");
  }
}

}  // namespace

void check_compounds(const Query& query, Report& report) {
  for_each_select(query.select(), [&](const Select& select) { check_select(select, query.resolution(), report); });
}

}  // namespace relmem::sql::checks
