// Counts that can only be one row per row of a table become counts of the rows that reference it.
#include <algorithm>
#include <optional>

#include "relmem/sql/lexer.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/repair.hpp"
#include "relmem/sql/resolve.hpp"
#include "missing_joins.hpp"
#include "splice.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

struct Reference {
  const Table* table = nullptr;  // the referencing table
  std::string column;            // its foreign key column
  std::string key;               // the referenced table's column
};

// The one foreign key of another table that references `target`; nullopt when none or several do.
std::optional<Reference> sole_reference(const Schema& schema, const Table& target) {
  std::optional<Reference> found;
  for (const Table& table : schema.tables) {
    if (iequals(table.name, target.name)) continue;
    for (const ForeignKey& key : table.foreign_keys) {
      if (!iequals(key.to_table, target.name)) continue;
      std::string to = referenced_column(key, target);
      if (to.empty()) continue;
      if (found) return std::nullopt;
      found = Reference{&table, key.from_column, to};
    }
  }
  return found;
}

bool orders_by_count(const Select& select) {
  return std::any_of(select.order_by.begin(), select.order_by.end(), [](const OrderTerm& term) {
    return term.expr->kind == ExprKind::Function && iequals(term.expr->op, "count");
  });
}

}  // namespace

CountRepair repair_counts(const std::string& sql, const Schema& schema) {
  const Select select = parse(sql);
  CountRepair repair{sql, {}};
  if (select.cores.size() != 1 || !orders_by_count(select)) return repair;
  const SelectCore& core = select.cores[0];
  if (core.from.size() != 1 || core.having) return repair;
  for (const ResultColumn& column : core.columns)
    if (contains_aggregate(*column.expr)) return repair;
  const Resolution resolution(select, &schema);
  const Scope* scope = resolution.scope(core);
  if (scope == nullptr || scope->sources.size() != 1) return repair;
  const Source& source = scope->sources[0];
  if (source.kind != SourceKind::BaseTable || source.table == nullptr) return repair;
  const std::optional<Reference> reference = sole_reference(schema, *source.table);
  if (!reference) return repair;
  if (!core.group_by.empty()) {  // grouped by the referenced key, every group is one row
    const Expr& term = *core.group_by[0];
    const Binding* binding = term.kind == ExprKind::Column ? resolution.binding(term) : nullptr;
    if (core.group_by.size() != 1 || binding == nullptr || binding->status != BindingStatus::Resolved ||
        binding->scope != scope || !iequals(binding->column_name, reference->key)) {
      return repair;
    }
  }
  const std::vector<Token> tokens = tokenize(sql);
  CountFix fix{reference->table->name,
               " " + join_clause(*reference->table, *scope, ForeignKeyLink{0, reference->key, reference->column}),
               core.group_by.empty() ? " GROUP BY " + render_name(Name{source.name, 0}) + "." +
                                           render_name(Name{reference->key, 0})
                                     : ""};
  std::vector<TextEdit> edits = qualifiers_for_join(select, resolution, scope, *reference->table);
  const size_t join_at = end_of_from(core, tokens);
  edits.push_back({join_at, join_at, fix.clause});
  if (!fix.group_by.empty()) edits.push_back({core.end, core.end, fix.group_by});
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) { return a.start < b.start; });
  repair.sql = splice(sql, edits);
  repair.repairs.push_back(std::move(fix));
  return repair;
}

}  // namespace relmem::sql
