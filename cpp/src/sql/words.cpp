#include "words.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace relmem::sql {

bool is_reserved_word(const std::string& word) {
  // SQLite's keywords that never fall back to being a name, plus the join keywords, which cannot be bare aliases.
  static const std::set<std::string> kReserved = {
      "ADD",        "ALL",     "ALTER",   "AND",        "AS",        "AUTOINCREMENT", "BETWEEN", "CASE",
      "CHECK",      "COLLATE", "COMMIT",  "CONSTRAINT", "CREATE",    "CROSS",      "DEFAULT", "DEFERRABLE",
      "DELETE",     "DISTINCT", "DROP",   "ELSE",       "ESCAPE",    "EXCEPT",     "EXISTS",  "FOREIGN",
      "FROM",       "FULL",    "GROUP",   "HAVING",     "IN",        "INDEX",      "INNER",   "INSERT",
      "INTERSECT",  "INTO",    "IS",      "ISNULL",     "JOIN",      "LEFT",       "LIMIT",   "NATURAL",
      "NOT",        "NOTNULL", "NULL",    "ON",         "OR",        "ORDER",      "OUTER",   "PRIMARY",
      "REFERENCES", "RETURNING", "RIGHT", "SELECT",     "SET",       "TABLE",      "THEN",    "TO",
      "TRANSACTION", "UNION",  "UNIQUE",  "UPDATE",     "USING",     "VALUES",     "WHEN",    "WHERE"};
  return kReserved.count(to_upper(word)) > 0;
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
