#pragma once
// Static repairs of planned SQL that leave every other byte of the text as it was: columns qualified by the wrong FROM
// item ("T2.weight" where T2 lacks weight and T1 has it), columns of a table missing from FROM ("SELECT model FROM
// cars_data" where car_names has model and references cars_data), and counts of one row per row ("SELECT first_name
// FROM Owners ORDER BY count(*)" where only Dogs references Owners).
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

struct JoinFix {
  std::string column;  // the column that no FROM item of its SELECT had, as written (with its qualifier, if any)
  std::string table;   // the table joined
  std::string clause;  // the text inserted: " JOIN table ON item.a = table.b"
  size_t position = 0;  // where it was inserted, in the SQL as it was before this fix
};

struct JoinRepair {
  std::string sql;               // the input with every join added; the input itself when there is none
  std::vector<JoinFix> repairs;  // in the order they were made
};

// A column that no FROM item of its SELECT has (unqualified, or qualified by the name of a table missing from FROM)
// gets its table joined, at the end of that SELECT's FROM clause, when exactly one of the tables that have the column
// is linked to the FROM clause by a foreign key, and by exactly one: " JOIN t ON item.fk = t.key". Columns of the
// SELECT that the new table would make ambiguous are qualified with the FROM item they read. Anything else is left as
// written. Repeats until no column is left to repair (one join per round, at most `max_joins`). Throws
// SyntaxError when the SQL does not parse.
JoinRepair repair_joins(const std::string& sql, const Schema& schema, int max_joins = 3);

struct CountFix {
  std::string table;     // the referencing table joined
  std::string clause;    // the text inserted after the FROM item: " JOIN table ON item.key = table.fk"
  std::string group_by;  // the text inserted before ORDER BY: " GROUP BY item.key"; "" when the query had its own
};

struct CountRepair {
  std::string sql;                // the input with the fix applied; the input itself when there is none
  std::vector<CountFix> repairs;  // none or one
};

// A SELECT that ranks the rows of one table by a count that can only be one row each counts the rows of the table
// that references it: "SELECT first_name FROM Owners ORDER BY count(*) DESC LIMIT 1" (refused by SQLite without
// GROUP BY) or the same grouped by the referenced key (every group one row) gets " JOIN Dogs ON Owners.owner_id =
// Dogs.owner_id" and, without a GROUP BY, " GROUP BY Owners.owner_id". Only when exactly one foreign key of
// another table references the table, the statement is one SELECT whose FROM holds that table alone, without HAVING
// or aggregates among its result columns, and an ORDER BY term is a count(...) call. Columns the joined table would
// make ambiguous are qualified. Anything else is left as written. Throws SyntaxError when the SQL does not parse.
CountRepair repair_counts(const std::string& sql, const Schema& schema);

}  // namespace relmem::sql
