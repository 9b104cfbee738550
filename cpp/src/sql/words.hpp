#pragma once
// Case-insensitive word helpers shared by the SQL parser, renderer and analyses.
#include <string>
#include <string_view>

#include "../common/ascii_case.hpp"  // iequals, to_upper, to_lower: ASCII case folding, as SQLite compares names

namespace relmem::sql {

// Keywords that cannot stand for a bare column, table or alias name in the supported grammar.
bool is_reserved_word(std::string_view word);
// True when `text` can be written without quotes: identifier characters only and not a reserved word.
bool is_bare_identifier(const std::string& text);

}  // namespace relmem::sql
