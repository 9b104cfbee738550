#pragma once
// The places where a SELECT compares a column with a string literal (=, !=, IN, LIKE, GLOB): what the value
// memory checks and corrects. A filter over relmem::sql::extract_conditions.
#include <cstddef>
#include <string>
#include <vector>

#include "relmem/catalog/schema.hpp"

namespace relmem {

struct ValueCondition {
  int literal_index = -1;  // see relmem::sql::literals; what relmem::sql::rewrite_literals takes
  std::string table;       // the base-table column the literal is compared with, named as in the schema
  std::string column;
  std::string op;     // "=", "!=", "IN", "NOT IN", "LIKE", "NOT LIKE", "GLOB", "NOT GLOB"
  std::string value;  // the literal's content, unescaped
  size_t start = 0;   // the literal's span in the SQL text, quotes included
  size_t end = 0;
  size_t column_start = 0;  // the column's span (a COLLATE after it included) and the whole comparison's
  size_t column_end = 0;
  size_t comparison_start = 0;
  size_t comparison_end = 0;
  bool pattern() const;  // LIKE/GLOB: value is a pattern with wildcards
};

// Conditions in source order. Columns that resolve to no base-table column of `schema` (result aliases, computed
// subquery outputs, unknown names) are left out. Throws relmem::sql::SyntaxError for SQL that does not parse.
std::vector<ValueCondition> value_conditions(const std::string& sql, const Schema& schema);

// The literal text of a LIKE/GLOB pattern with its wildcards removed ("%Los Angeles%" -> "Los Angeles").
std::string pattern_text(const ValueCondition& condition);

}  // namespace relmem
