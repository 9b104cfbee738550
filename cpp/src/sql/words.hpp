#pragma once
// Case-insensitive word helpers shared by the SQL parser, renderer and analyses.
#include <string>

namespace relmem::sql {

bool iequals(const std::string& a, const std::string& b);
std::string to_upper(std::string text);
std::string to_lower(std::string text);
// Keywords that cannot stand for a bare column, table or alias name in the supported grammar.
bool is_reserved_word(const std::string& word);
// True when `text` can be written without quotes: identifier characters only and not a reserved word.
bool is_bare_identifier(const std::string& text);

}  // namespace relmem::sql
