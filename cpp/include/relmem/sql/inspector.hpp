#pragma once
// Static error detection for a SELECT against a database schema, before anything is executed.
#include <string>
#include <vector>

#include "relmem/catalog/schema.hpp"
#include "relmem/common.hpp"
#include "relmem/sql/query.hpp"

namespace relmem::sql {

enum class DiagnosticKind {
  Syntax,                // the SQL does not parse
  UnknownTable,          // FROM names a table the database lacks, or a qualifier names no FROM item
  UnknownColumn,         // no table in scope has the column
  AmbiguousColumn,       // an unqualified column that several FROM items have
  MissingJoin,           // a column of a table that exists but is not in FROM
  JoinNotOnForeignKey,   // a join equality that follows no foreign key declared between the two tables
  RedundantJoin,         // a joined table whose columns nothing uses except the join itself
  TypeMismatch,          // a text column compared with a number, or a numeric column with a non-numeric string
  UngroupedColumn,       // a plain SELECT column that is neither grouped nor aggregated in an aggregate query
  AggregateInOrderBy,    // ORDER BY aggregates a query that is otherwise not an aggregate query
  MisplacedAggregate,    // an aggregate in WHERE, ON or GROUP BY (SQLite refuses these)
  CompoundColumnCount,   // UNION/INTERSECT/EXCEPT parts with different numbers of columns
  MisplacedOrderBy,      // ORDER BY or LIMIT before UNION/INTERSECT/EXCEPT (SQLite refuses these)
};

enum class Severity {
  Error,    // the query fails in SQLite or almost surely answers something else than intended
  Warning,  // suspicious; correct queries do this too, so use as a hint only
};

struct Diagnostic {
  DiagnosticKind kind = DiagnosticKind::Syntax;
  Severity severity = Severity::Error;
  size_t start = 0;  // span in the SQL text that the diagnostic is about
  size_t end = 0;
  std::string message;
};

std::string kind_name(DiagnosticKind kind);  // snake_case: "unknown_column", ...
std::string severity_name(Severity severity);  // "error" or "warning"
// Every kind with its severity; a kind always has the same severity.
Severity severity_of(DiagnosticKind kind);

// Diagnostics in order of position. SQL that does not parse gives one Syntax diagnostic instead of an exception.
std::vector<Diagnostic> inspect(const std::string& sql, const Schema& schema);
// For a query parsed with a schema; throws relmem::Error when it was parsed without one.
std::vector<Diagnostic> inspect(const Query& query);

}  // namespace relmem::sql
