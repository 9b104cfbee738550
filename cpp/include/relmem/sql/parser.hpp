#pragma once
// Recursive-descent parser for the SQLite SELECT dialect used by Spider and BIRD.
#include <string>

#include "relmem/sql/ast.hpp"

namespace relmem::sql {

// Deepest expression/subquery nesting the parser accepts; keeps every recursive walk over a tree shallow.
constexpr int kMaxTreeHeight = 1000;

// Parses one SELECT (or WITH ... SELECT) statement; trailing semicolons are allowed. Throws SyntaxError (a
// relmem::Error with the offset) for anything else, including trees deeper than kMaxTreeHeight.
Select parse(const std::string& sql);

}  // namespace relmem::sql
