#pragma once
// Tables missing from a SELECT's FROM clause and the foreign keys that could join them, shared by the inspector's
// missing-join diagnostics and the repairs that join a table, so that all of them propose the same join.
#include <cstddef>
#include <string>
#include <vector>

#include "relmem/catalog/schema.hpp"
#include "relmem/sql/lexer.hpp"
#include "relmem/sql/resolve.hpp"
#include "splice.hpp"

namespace relmem::sql {

struct ForeignKeyLink {
  int source = -1;           // the FROM item of the scope that the table joins
  std::string item_column;   // the FROM item's column in the join condition
  std::string table_column;  // the table's
};

// The FROM item of `scope` or an enclosing scope that reads base table `table`; nullptr when none does.
const Source* visible_base_table(const Scope* scope, const std::string& table);

// The tables of `schema` that have `column` and that no FROM item visible from `scope` reads, in schema order.
std::vector<const Table*> tables_missing_with_column(const Schema& schema, const Scope* scope,
                                                     const std::string& column);

// Every foreign key between `table` and a base table of `scope`'s FROM clause, either way; a key without a target
// column counts when the target has a one-column primary key.
std::vector<ForeignKeyLink> foreign_key_links(const Table& table, const Scope& scope);

// "JOIN table ON item.a = table.b", names quoted where SQL needs it.
std::string join_clause(const Table& table, const Scope& scope, const ForeignKeyLink& link);

// The offset just after the last FROM item of `core` (its name or subquery, alias, ON condition or USING list): where
// a join is inserted.
size_t end_of_from(const SelectCore& core, const std::vector<Token>& tokens);

// The qualifiers ("item.") that the unqualified columns of `scope` need once `table` is joined to it: those of its
// FROM items that `table` also has.
std::vector<TextEdit> qualifiers_for_join(const Select& select, const Resolution& resolution, const Scope* scope,
                                          const Table& table);

}  // namespace relmem::sql
