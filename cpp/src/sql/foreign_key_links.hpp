#pragma once
// The foreign keys that could join a table to a SELECT's FROM clause, shared by the inspector's hints and the join
// repair so that both propose the same join.
#include <string>
#include <vector>

#include "relmem/catalog/schema.hpp"
#include "relmem/sql/resolve.hpp"

namespace relmem::sql {

struct ForeignKeyLink {
  int source = -1;           // the FROM item of the scope that the table joins
  std::string item_column;   // the FROM item's column in the join condition
  std::string table_column;  // the table's
};

// Every foreign key between `table` and a base table of `scope`'s FROM clause, either way; a key without a target
// column counts when the target has a one-column primary key.
std::vector<ForeignKeyLink> foreign_key_links(const Table& table, const Scope& scope);

// "JOIN table ON item.a = table.b", names quoted where SQL needs it.
std::string join_clause(const Table& table, const Scope& scope, const ForeignKeyLink& link);

}  // namespace relmem::sql
