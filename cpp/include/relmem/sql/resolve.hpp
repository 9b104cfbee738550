#pragma once
// Name resolution: binds every column reference of a SELECT to the FROM item it reads, following SQLite's scoping
// (FROM items first, then result aliases, then enclosing queries), and through subqueries and CTEs to the base
// table column they select when they select it plainly.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "relmem/catalog/schema.hpp"
#include "relmem/sql/ast.hpp"

namespace relmem::sql {

// An output column of a subquery or CTE; table/column name its base-table origin when it selects one plainly.
struct DerivedColumn {
  std::string name;
  const Table* table = nullptr;
  const Column* column = nullptr;
};

enum class SourceKind { BaseTable, Cte, Subquery };

// One FROM item as the names in its SELECT see it.
struct Source {
  SourceKind kind = SourceKind::BaseTable;
  std::string name;               // what qualifies its columns: the alias, else the table name
  const TableRef* ref = nullptr;
  const Table* table = nullptr;   // BaseTable found in the schema
  std::vector<DerivedColumn> columns;  // Cte and Subquery
  // False for a base table the schema lacks (or when there is no schema), and for a subquery or CTE whose columns
  // come from such a table through *: its columns cannot be checked.
  bool columns_known = false;
};

struct Scope {
  const SelectCore* core = nullptr;
  const Scope* parent = nullptr;  // the enclosing query's scope, for correlated subqueries
  std::vector<Source> sources;
  std::vector<std::string> using_columns;  // named by JOIN ... USING: never ambiguous
  bool has_natural_join = false;
};

enum class BindingStatus {
  Resolved,          // source (and column when the source's columns are known) found
  ResultAlias,       // names a result column alias of its SELECT
  Unverifiable,      // the source could not be checked: unknown table, or no schema
  UnknownQualifier,  // "x.col" where no FROM item is named x
  UnknownColumn,     // no FROM item in scope has the column
  Ambiguous,         // several FROM items of the same SELECT have it
};

struct Binding {
  BindingStatus status = BindingStatus::UnknownColumn;
  const Scope* scope = nullptr;      // where it was found; for UnknownQualifier and UnknownColumn without a
                                     // source, the scope where the search began
  int source = -1;                   // index into scope->sources, when a FROM item was found
  bool outer = false;                // found in an enclosing query's scope
  const Table* table = nullptr;      // base-table origin, when known
  const Column* column = nullptr;
  std::vector<int> candidates;       // Ambiguous: the sources that have the column

  // Best-effort names for reporting: the origin when known, else the FROM item's table name and the name as written.
  std::string table_name;
  std::string column_name;
};

class Resolution {
 public:
  // `schema` may be null: then only what the SQL itself says (aliases, single-table queries) is resolved.
  Resolution(const Select& select, const Schema* schema);

  // For Column expressions, and for double-quoted strings that SQLite would read as a column (nullptr otherwise).
  const Binding* binding(const Expr& expr) const;
  const Scope* scope(const SelectCore& core) const;
  // Every SELECT core's scope, inner FROM subqueries before the query that reads them.
  const std::vector<std::unique_ptr<Scope>>& scopes() const { return scopes_; }
  const Schema* schema() const { return schema_; }

 private:
  friend class Resolver;
  const Schema* schema_;
  std::vector<std::unique_ptr<Scope>> scopes_;
  std::unordered_map<const SelectCore*, const Scope*> scope_of_core_;
  std::unordered_map<const Expr*, Binding> bindings_;
};

}  // namespace relmem::sql
