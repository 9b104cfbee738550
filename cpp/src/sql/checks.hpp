#pragma once
// The individual checks behind relmem::sql::inspect, and what they share.
#include <string>
#include <vector>

#include "relmem/sql/inspector.hpp"

namespace relmem::sql::checks {

class Report {
 public:
  void add(DiagnosticKind kind, size_t start, size_t end, std::string message);
  std::vector<Diagnostic> take();

 private:
  std::vector<Diagnostic> diagnostics_;
};

void check_names(const Query& query, Report& report);       // unknown tables and columns, ambiguity, missing joins
void check_joins(const Query& query, Report& report);       // foreign keys and redundant joins
void check_types(const Query& query, Report& report);       // literals compared with columns of another type
void check_aggregates(const Query& query, Report& report);  // grouping and aggregate placement
void check_compounds(const Query& query, Report& report);   // UNION/INTERSECT/EXCEPT shape

// The expression under any COLLATE wrappers.
const Expr& without_collate(const Expr& expr);
// The binding of a column expression, looking through COLLATE; nullptr for anything else.
const Binding* column_binding(const Resolution& resolution, const Expr& expr);
// An equality between two column references, taken from a SELECT's ON clauses and WHERE.
struct ColumnEquality {
  const Expr* equality;
  const Expr* left;  // the column expressions, COLLATE removed
  const Expr* right;
  const Binding* left_binding;
  const Binding* right_binding;
};
std::vector<ColumnEquality> column_equalities(const SelectCore& core, const Resolution& resolution);
// The operands of a tree of ANDs.
std::vector<const Expr*> conjuncts(const Expr& expr);
// The candidate closest to `name` (case-insensitive edit distance), or "" when none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string suggestion(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace relmem::sql::checks
