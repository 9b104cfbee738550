// Join equalities that follow no foreign key, and joined tables that nothing uses.
#include <algorithm>
#include <map>
#include <set>

#include "checks.hpp"
#include "words.hpp"

namespace relmem::sql::checks {
namespace {

bool references(const Table& from, const Column& from_column, const Table& to, const Column& to_column) {
  for (const ForeignKey& key : from.foreign_keys) {
    if (!iequals(key.from_column, from_column.name) || !iequals(key.to_table, to.name)) continue;
    if (key.to_column.empty() ? to_column.primary_key : iequals(key.to_column, to_column.name)) return true;
  }
  return false;
}

std::string describe_keys(const Table& a, const Table& b) {
  std::string out;
  auto add = [&](const Table& from, const Table& to) {
    for (const ForeignKey& key : from.foreign_keys) {
      if (!iequals(key.to_table, to.name)) continue;
      out += (out.empty() ? "" : ", ") + from.name + "." + key.from_column + " -> " + to.name +
             (key.to_column.empty() ? "" : "." + key.to_column);
    }
  };
  add(a, b);
  if (&a != &b) add(b, a);
  return out;
}

bool has_using_or_natural(const std::vector<TableRef>& items) {
  for (const TableRef& item : items) {
    if (!item.using_columns.empty() || item.join.find("NATURAL") != std::string::npos) return true;
    if (has_using_or_natural(item.group)) return true;
  }
  return false;
}

class JoinChecker {
 public:
  JoinChecker(const Query& query, Report& report) : query_(query), report_(report) {}

  void run() {
    for (const auto& scope : query_.resolution().scopes()) collect_links(*scope);
    count_uses();
    for (const auto& scope : query_.resolution().scopes()) {
      for (const ColumnEquality& link : links_[scope.get()]) check_foreign_key(link);
      check_redundant(*scope);
    }
  }

 private:
  // Equalities between columns of two different FROM items of the SELECT.
  void collect_links(const Scope& scope) {
    for (const ColumnEquality& equality : column_equalities(*scope.core, query_.resolution())) {
      const Binding* left = equality.left_binding;
      const Binding* right = equality.right_binding;
      if (!in_scope(left, scope) || !in_scope(right, scope) || left->source == right->source) continue;
      links_[&scope].push_back(equality);
      link_operands_.insert(equality.left);
      link_operands_.insert(equality.right);
    }
  }

  static bool in_scope(const Binding* binding, const Scope& scope) {
    return binding != nullptr && binding->status == BindingStatus::Resolved && binding->scope == &scope &&
           binding->source >= 0;
  }

  void count_uses() {
    for_each_expr(query_.select(), [&](const Expr& e) {
      if (link_operands_.count(&e) > 0) return;
      const Binding* binding = query_.resolution().binding(e);
      if (binding == nullptr || binding->scope == nullptr) return;
      if (binding->source >= 0) ++uses_[{binding->scope, binding->source}];
      // An ambiguous or unverifiable name may read any of its candidates: none of them is unused.
      for (int candidate : binding->candidates) ++uses_[{binding->scope, candidate}];
    });
    for (const auto& scope : query_.resolution().scopes()) {
      for (const ResultColumn& column : scope->core->columns) {
        if (column.expr->kind != ExprKind::Star || !column.expr->table.empty()) continue;
        for (size_t i = 0; i < scope->sources.size(); ++i) ++uses_[{scope.get(), static_cast<int>(i)}];
      }
    }
  }

  void check_foreign_key(const ColumnEquality& link) {
    const Binding& a = *link.left_binding;
    const Binding& b = *link.right_binding;
    if (a.table == nullptr || a.column == nullptr || b.table == nullptr || b.column == nullptr) return;
    if (references(*a.table, *a.column, *b.table, *b.column) || references(*b.table, *b.column, *a.table, *a.column)) {
      return;
    }
    std::string keys = describe_keys(*a.table, *b.table);
    std::string equality = a.table->name + "." + a.column->name + " = " + b.table->name + "." + b.column->name;
    report_.add(DiagnosticKind::JoinNotOnForeignKey, link.equality->start, link.equality->end,
                keys.empty() ? "no foreign key links " + a.table->name + " and " + b.table->name + "; check that " +
                                   equality + " joins related columns"
                             : equality + " does not follow the foreign keys between them: " + keys);
  }

  // A joined table is redundant when nothing reads its columns and the join can neither multiply nor (with
  // referential integrity) filter rows: a LEFT JOIN, or a join on its whole primary key. A table joined without
  // any condition only multiplies rows.
  void check_redundant(const Scope& scope) {
    if (scope.sources.size() < 2 || has_using_or_natural(scope.core->from)) return;
    std::vector<std::set<int>> partners(scope.sources.size());
    std::vector<std::vector<const Binding*>> link_columns(scope.sources.size());
    for (const ColumnEquality& link : links_[&scope]) {
      partners[link.left_binding->source].insert(link.right_binding->source);
      partners[link.right_binding->source].insert(link.left_binding->source);
      link_columns[link.left_binding->source].push_back(link.left_binding);
      link_columns[link.right_binding->source].push_back(link.right_binding);
    }
    for (size_t i = 0; i < scope.sources.size(); ++i) {
      if (uses_[{&scope, static_cast<int>(i)}] > 0 || partners[i].size() > 1) continue;
      const Source& source = scope.sources[i];
      std::string name = source.name.empty() ? "the subquery" : "'" + source.name + "'";
      std::string message;
      if (partners[i].empty()) {
        message = name + " is joined without a join condition and none of its columns is used; it only repeats rows";
      } else if (i > 0 && source.ref->join.find("LEFT") != std::string::npos) {
        message = name + " is LEFT JOINed but none of its columns is used; the join changes nothing";
      } else if (source.table != nullptr && covers_primary_key(*source.table, link_columns[i])) {
        message = name + " is joined on its primary key but none of its columns is used; the join only drops rows "
                         "without a match";
      } else {
        continue;
      }
      report_.add(DiagnosticKind::RedundantJoin, source.ref->start, source.ref->end, message);
    }
  }

  static bool covers_primary_key(const Table& table, const std::vector<const Binding*>& columns) {
    bool has_key = false;
    for (const Column& key : table.columns) {
      if (!key.primary_key) continue;
      has_key = true;
      bool joined = std::any_of(columns.begin(), columns.end(),
                                [&](const Binding* binding) { return binding->column == &key; });
      if (!joined) return false;
    }
    return has_key;
  }

  const Query& query_;
  Report& report_;
  std::map<const Scope*, std::vector<ColumnEquality>> links_;
  std::set<const Expr*> link_operands_;
  std::map<std::pair<const Scope*, int>, int> uses_;
};

}  // namespace

void check_joins(const Query& query, Report& report) { JoinChecker(query, report).run(); }

}  // namespace relmem::sql::checks
