// Joins the table of a column that no FROM item of its SELECT has, when one foreign key says how.
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

// The offset just after the last FROM item of `core`: its name or subquery, alias, ON condition or USING list.
size_t end_of_from(const SelectCore& core, const std::vector<Token>& tokens) {
  const TableRef& last = core.from.back();
  size_t end = last.end;
  auto next = [&](size_t offset) {
    return std::lower_bound(tokens.begin(), tokens.end(), offset,
                            [](const Token& token, size_t at) { return token.start < at; });
  };
  if (!last.alias.empty()) {
    auto token = next(end);
    if (token->kind == TokenKind::Word && iequals(token->text, "AS")) ++token;
    end = token->end;
  }
  if (last.on) end = last.on->end;
  if (!last.using_columns.empty()) {
    auto token = next(end);
    while (!(token->kind == TokenKind::Operator && token->text == ")") && token->kind != TokenKind::End) ++token;
    end = token->end;
  }
  return end;
}

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
    std::vector<TextEdit> inserts{{fix.position, fix.position, fix.clause}};
    for_each_expr(select_, [&](const Expr& e) {
      if (e.kind != ExprKind::Column || !e.table.empty()) return;
      const Binding* binding = resolution_.binding(e);
      if (binding == nullptr || binding->status != BindingStatus::Resolved || binding->source < 0) return;
      if (binding->scope != plan.scope || plan.table->column(e.column.text) == nullptr) return;
      inserts.push_back({e.start, e.start, render_name(Name{binding->scope->sources[binding->source].name, 0}) + "."});
    });
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
