#pragma once
// Writes a syntax tree back as SQL text: canonical spacing and keyword case, names quoted as they were written,
// parentheses wherever operator precedence needs them.
#include <string>

#include "relmem/sql/ast.hpp"

namespace relmem::sql {

std::string render(const Select& select);
std::string render(const Expr& expr);
std::string render_name(const Name& name);
// A string value as a single-quoted SQL literal ('' escapes).
std::string quote_string(const std::string& value);

}  // namespace relmem::sql
