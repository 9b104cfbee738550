#pragma once
// Repairs columns qualified by the wrong FROM item ("T2.weight" where T2 lacks weight and T1 has it), leaving every
// other byte of the text as it was.
#include <cstddef>
#include <string>
#include <vector>

#include "relmem/catalog/schema.hpp"

namespace relmem::sql {

struct QualifierFix {
  std::string column;       // the column as written, without quotes
  std::string original;     // the qualifier as written, quotes included
  std::string replacement;  // the FROM item's name, quoted like the original (or where it must be)
  size_t start = 0;         // span of the original qualifier in the input SQL: [start, end)
  size_t end = 0;
};

struct QualifierRepair {
  std::string sql;                    // the input with every fix applied; the input itself when there is none
  std::vector<QualifierFix> repairs;  // in source order
};

// A qualified column is repaired when its qualifier names a FROM item of its own SELECT that lacks the column, every
// other FROM item of that SELECT has known columns, and exactly one of them has the column (names compared
// case-insensitively, as the schema does): the qualifier becomes that item's name (its alias, else its table name).
// Anything else is left as written: no such item or several, a qualifier naming an enclosing query's FROM item
// (correlated subqueries), an item whose name does not single it out, and a fix that would compare the column with
// itself ("T1.a = T2.a" where only T1 has a: the join is wrong, not the qualifier). Throws SyntaxError when the SQL
// does not parse.
QualifierRepair repair_qualifiers(const std::string& sql, const Schema& schema);

}  // namespace relmem::sql
