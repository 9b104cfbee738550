#pragma once
// The filter conditions of a query: every comparison of a column with a literal, resolved to real tables.
#include <string>
#include <vector>

#include "relmem/sql/ast.hpp"
#include "relmem/sql/resolve.hpp"

namespace relmem::sql {

struct Condition {
  std::string table;   // the base table (through aliases, subqueries and CTEs); "" when it cannot be known
  std::string column;
  // =, !=, <, <=, >, >=, IS, IS NOT, [NOT] LIKE/GLOB/REGEXP/MATCH, [NOT] IN, [NOT] BETWEEN. Written with the column
  // on the left: "5 < age" is reported as age > 5; == is reported as =, <> as !=.
  std::string op;
  LiteralKind literal_kind = LiteralKind::String;  // String, Number or Null
  std::string literal;                              // the value: unescaped string, number text, or NULL
  int literal_index = -1;                           // for rewrite_literals
  size_t start = 0;                                 // the literal's span in the SQL
  size_t end = 0;
  size_t column_start = 0;                          // the column's span, a COLLATE after it included
  size_t column_end = 0;
  size_t comparison_start = 0;                      // the whole comparison's: "5 < age", "age BETWEEN 1 AND 9"
  size_t comparison_end = 0;
};

// One entry per literal compared with a column (an IN list or BETWEEN gives one per literal), in source order.
std::vector<Condition> extract_conditions(const Select& select, const Resolution& resolution);

}  // namespace relmem::sql
