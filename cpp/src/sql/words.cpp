#include "words.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace relmem::sql {

bool is_reserved_word(std::string_view word) {
  // SQLite's keywords that never fall back to being a name, plus the join keywords, which cannot be bare aliases.
  // Sorted, for the binary search; the parser asks this of every word, so it allocates nothing.
  static constexpr std::array<std::string_view, 64> kReserved = {
      "ADD",        "ALL",     "ALTER",   "AND",        "AS",        "AUTOINCREMENT", "BETWEEN", "CASE",
      "CHECK",      "COLLATE", "COMMIT",  "CONSTRAINT", "CREATE",    "CROSS",      "DEFAULT", "DEFERRABLE",
      "DELETE",     "DISTINCT", "DROP",   "ELSE",       "ESCAPE",    "EXCEPT",     "EXISTS",  "FOREIGN",
      "FROM",       "FULL",    "GROUP",   "HAVING",     "IN",        "INDEX",      "INNER",   "INSERT",
      "INTERSECT",  "INTO",    "IS",      "ISNULL",     "JOIN",      "LEFT",       "LIMIT",   "NATURAL",
      "NOT",        "NOTNULL", "NULL",    "ON",         "OR",        "ORDER",      "OUTER",   "PRIMARY",
      "REFERENCES", "RETURNING", "RIGHT", "SELECT",     "SET",       "TABLE",      "THEN",    "TO",
      "TRANSACTION", "UNION",  "UNIQUE",  "UPDATE",     "USING",     "VALUES",     "WHEN",    "WHERE"};
  constexpr size_t kLongest = 13;  // AUTOINCREMENT
  if (word.size() > kLongest) return false;
  std::array<char, kLongest> upper{};
  std::transform(word.begin(), word.end(), upper.begin(), ascii_upper);
  return std::binary_search(kReserved.begin(), kReserved.end(), std::string_view(upper.data(), word.size()));
}

bool is_bare_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || c == '$' || u >= 0x80)) return false;
  }
  return text[0] != '$' && !is_reserved_word(text);
}

}  // namespace relmem::sql
