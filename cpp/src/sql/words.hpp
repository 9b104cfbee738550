#pragma once
// Case-insensitive word helpers shared by the SQL parser, renderer and analyses.
#include <string>
#include <string_view>

namespace relmem::sql {

// ASCII case folding, as SQLite compares names and keywords.
bool iequals(std::string_view a, std::string_view b);
std::string to_upper(std::string text);
std::string to_lower(std::string text);
// Keywords that cannot stand for a bare column, table or alias name in the supported grammar.
bool is_reserved_word(std::string_view word);
// True when `text` can be written without quotes: identifier characters only and not a reserved word.
bool is_bare_identifier(const std::string& text);

}  // namespace relmem::sql
