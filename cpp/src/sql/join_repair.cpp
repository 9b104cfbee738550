// Joins the table of a column that no FROM item of its SELECT has, when one foreign key says how.
#include <algorithm>
#include <optional>

#include "relmem/sql/lexer.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/repair.hpp"
#include "relmem/sql/resolve.hpp"
#include "missing_joins.hpp"
#include "splice.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

struct Plan {
  const Scope* scope = nullptr;
  const Table* table = nullptr;
  ForeignKeyLink link;
  std::string column;
};

class JoinFinder {
 public:
  JoinFinder(const std::string& sql, const Schema& schema)
      : sql_(sql), schema_(schema), select_(parse(sql)), resolution_(select_, &schema), tokens_(tokenize(sql)) {}

  // The SQL with the first repairable column's table joined; nullopt when no column can be repaired.
  std::optional<std::pair<std::string, JoinFix>> first() {
    std::optional<Plan> plan;
    for_each_expr(select_, [&](const Expr& e) {
      if (!plan && e.kind == ExprKind::Column) plan = consider(e);
    });
    if (!plan) return std::nullopt;
    return apply(*plan);
  }

 private:
  std::optional<Plan> consider(const Expr& e) const {
    const Binding* binding = resolution_.binding(e);
    if (binding == nullptr || binding->scope == nullptr || binding->scope->core == nullptr) return std::nullopt;
    std::vector<const Table*> owners;
    if (binding->status == BindingStatus::UnknownColumn && binding->source < 0 && e.table.empty()) {
      owners = tables_missing_with_column(schema_, binding->scope, e.column.text);
    } else if (binding->status == BindingStatus::UnknownQualifier && e.schema.empty()) {
      const Table* table = schema_.table(e.table.text);
      if (table != nullptr && table->column(e.column.text) != nullptr &&
          visible_base_table(binding->scope, table->name) == nullptr) {
        owners.push_back(table);
      }
    }
    std::optional<Plan> plan;
    for (const Table* table : owners) {
      std::vector<ForeignKeyLink> found = foreign_key_links(*table, *binding->scope);
      if (found.empty()) continue;
      if (plan || found.size() > 1) return std::nullopt;  // several ways to join: the query's intent is unclear
      plan = Plan{binding->scope, table, found.front(), sql_.substr(e.start, e.end - e.start)};
    }
    if (plan && plan->scope->core->from.empty()) return std::nullopt;
    return plan;
  }

  std::pair<std::string, JoinFix> apply(const Plan& plan) const {
    JoinFix fix{plan.column, plan.table->name, " " + join_clause(*plan.table, *plan.scope, plan.link),
                end_of_from(*plan.scope->core, tokens_)};
    // Insertions: the join, and a qualifier for each column the new table would make ambiguous.
    std::vector<TextEdit> inserts = qualifiers_for_join(select_, resolution_, plan.scope, *plan.table);
    inserts.push_back({fix.position, fix.position, fix.clause});
    std::sort(inserts.begin(), inserts.end(), [](const TextEdit& a, const TextEdit& b) { return a.start < b.start; });
    return {splice(sql_, inserts), fix};
  }

  const std::string& sql_;
  const Schema& schema_;
  Select select_;
  Resolution resolution_;  // points into select_, which therefore never moves
  std::vector<Token> tokens_;
};

}  // namespace

JoinRepair repair_joins(const std::string& sql, const Schema& schema, int max_joins) {
  JoinRepair repair{sql, {}};
  for (int round = 0; round < max_joins; ++round) {
    auto next = JoinFinder(repair.sql, schema).first();
    if (!next) break;
    repair.sql = std::move(next->first);
    repair.repairs.push_back(std::move(next->second));
  }
  return repair;
}

}  // namespace relmem::sql
