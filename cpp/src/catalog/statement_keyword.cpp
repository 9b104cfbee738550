#include "statement_keyword.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "../common/ascii_case.hpp"

namespace relmem {
namespace {

bool is_word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// The offset just past the quoted text that starts at `i` ('...', "...", `...` or [...]); the end of the text when
// it is never closed.
size_t skip_quoted(const std::string& sql, size_t i) {
  const char close = sql[i] == '[' ? ']' : sql[i];
  for (size_t j = i + 1; j < sql.size(); ++j) {
    if (sql[j] != close) continue;
    if (close != ']' && j + 1 < sql.size() && sql[j + 1] == close) {  // a doubled quote stands for itself
      ++j;
      continue;
    }
    return j + 1;
  }
  return sql.size();
}

}  // namespace

size_t skip_space_and_comments(const std::string& s, size_t i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s.compare(i, 2, "--") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) return s.size();
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i + 2);
      if (i == std::string::npos) return s.size();
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

std::string statement_keyword(const std::string& sql) {
  // The statement a WITH clause serves starts at the first top-level word after a CTE's closing parenthesis,
  // other than AS: "a(x) AS (SELECT 1), b AS (SELECT 2) SELECT ...".
  int depth = 0;
  bool after_close = false;
  bool first = true;
  for (size_t i = skip_space_and_comments(sql, 0); i < sql.size(); i = skip_space_and_comments(sql, i)) {
    const char c = sql[i];
    if (is_word_start(c)) {
      size_t end = i;
      while (end < sql.size() && is_word_char(sql[end])) ++end;
      const std::string word = to_upper(sql.substr(i, end - i));
      i = end;
      if (first) {
        if (word != "WITH") return word;
        first = false;
      } else if (depth == 0 && after_close && word != "AS") {
        return word;
      }
      after_close = false;
      continue;
    }
    if (first) return "";
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      i = skip_quoted(sql, i);
    } else {
      if (c == '(') ++depth;
      if (c == ')') --depth;
      ++i;
    }
    after_close = c == ')' && depth == 0;
  }
  return "";
}

bool is_other_statement_keyword(const std::string& keyword) {
  static const std::array<const char*, 21> keywords = {
      "ALTER",   "ANALYZE", "ATTACH",  "BEGIN",    "COMMIT",    "CREATE",  "DELETE",
      "DETACH",  "DROP",    "END",     "EXPLAIN",  "INSERT",    "PRAGMA",  "REINDEX",
      "RELEASE", "REPLACE", "ROLLBACK", "SAVEPOINT", "UPDATE",  "VACUUM",  "VALUES"};
  return std::any_of(keywords.begin(), keywords.end(), [&](const char* k) { return keyword == k; });
}

}  // namespace relmem
