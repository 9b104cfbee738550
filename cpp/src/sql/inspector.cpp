#include "relmem/sql/inspector.hpp"

#include <algorithm>

#include "checks.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "words.hpp"

namespace relmem::sql {

std::string kind_name(DiagnosticKind kind) {
  switch (kind) {
    case DiagnosticKind::Syntax: return "syntax";
    case DiagnosticKind::UnknownTable: return "unknown_table";
    case DiagnosticKind::UnknownColumn: return "unknown_column";
    case DiagnosticKind::AmbiguousColumn: return "ambiguous_column";
    case DiagnosticKind::MissingJoin: return "missing_join";
    case DiagnosticKind::JoinNotOnForeignKey: return "join_not_on_foreign_key";
    case DiagnosticKind::RedundantJoin: return "redundant_join";
    case DiagnosticKind::TypeMismatch: return "type_mismatch";
    case DiagnosticKind::UngroupedColumn: return "ungrouped_column";
    case DiagnosticKind::AggregateInOrderBy: return "aggregate_in_order_by";
    case DiagnosticKind::MisplacedAggregate: return "misplaced_aggregate";
    case DiagnosticKind::CompoundColumnCount: return "compound_column_count";
    case DiagnosticKind::MisplacedOrderBy: return "misplaced_order_by";
  }
  return "unknown";
}

std::string severity_name(Severity severity) { return severity == Severity::Error ? "error" : "warning"; }

Severity severity_of(DiagnosticKind kind) {
  switch (kind) {
    case DiagnosticKind::JoinNotOnForeignKey:
    case DiagnosticKind::RedundantJoin:
    case DiagnosticKind::TypeMismatch:
    case DiagnosticKind::UngroupedColumn: return Severity::Warning;
    default: return Severity::Error;
  }
}

std::vector<Diagnostic> inspect(const Query& query) {
  if (query.schema() == nullptr) throw Error("inspect needs a query parsed with its database schema");
  checks::Report report;
  checks::check_names(query, report);
  checks::check_joins(query, report);
  checks::check_types(query, report);
  checks::check_aggregates(query, report);
  checks::check_compounds(query, report);
  return report.take();
}

std::vector<Diagnostic> inspect(const std::string& sql, const Schema& schema) {
  try {
    return inspect(Query(sql, schema));
  } catch (const SyntaxError& error) {
    return {Diagnostic{DiagnosticKind::Syntax, Severity::Error, error.offset(), sql.size(), error.what()}};
  }
}

namespace checks {

void Report::add(DiagnosticKind kind, size_t start, size_t end, std::string message) {
  diagnostics_.push_back(Diagnostic{kind, severity_of(kind), start, end, std::move(message)});
}

std::vector<Diagnostic> Report::take() {
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.start < b.start; });
  return std::move(diagnostics_);
}

const Expr& without_collate(const Expr& expr) {
  const Expr* inner = &expr;
  while (inner->kind == ExprKind::Collate) inner = inner->args[0].get();
  return *inner;
}

const Binding* column_binding(const Resolution& resolution, const Expr& expr) {
  const Binding* binding = resolution.binding(without_collate(expr));
  return binding != nullptr && binding->status != BindingStatus::ResultAlias ? binding : nullptr;
}

namespace {

void join_conditions(const std::vector<TableRef>& items, std::vector<const Expr*>& out) {
  for (const TableRef& item : items) {
    join_conditions(item.group, out);
    if (item.on) out.push_back(item.on.get());
  }
}

}  // namespace

std::vector<ColumnEquality> column_equalities(const SelectCore& core, const Resolution& resolution) {
  std::vector<const Expr*> roots;
  join_conditions(core.from, roots);
  if (core.where) roots.push_back(core.where.get());
  std::vector<ColumnEquality> found;
  for (const Expr* root : roots) {
    for (const Expr* term : conjuncts(*root)) {
      if (term->kind != ExprKind::Binary || (term->op != "=" && term->op != "==")) continue;
      const Expr& left = without_collate(*term->args[0]);
      const Expr& right = without_collate(*term->args[1]);
      const Binding* left_binding = column_binding(resolution, left);
      const Binding* right_binding = column_binding(resolution, right);
      if (left_binding == nullptr || right_binding == nullptr) continue;
      found.push_back(ColumnEquality{term, &left, &right, left_binding, right_binding});
    }
  }
  return found;
}

std::vector<const Expr*> conjuncts(const Expr& expr) {
  if (expr.kind != ExprKind::Binary || expr.op != "AND") return {&expr};
  std::vector<const Expr*> out = conjuncts(*expr.args[0]);
  std::vector<const Expr*> right = conjuncts(*expr.args[1]);
  out.insert(out.end(), right.begin(), right.end());
  return out;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: skip the quadratic work when that alone is too far.
    size_t length_gap = name.size() > candidate.size() ? name.size() - candidate.size() : candidate.size() - name.size();
    if (length_gap >= best_distance) continue;
    size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string suggestion(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best = closest_name(name, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

}  // namespace checks
}  // namespace relmem::sql
