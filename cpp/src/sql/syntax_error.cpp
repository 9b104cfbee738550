#include "relmem/sql/syntax_error.hpp"

#include <algorithm>

namespace relmem::sql {
namespace {

std::string describe_position(const std::string& sql, size_t offset) {
  offset = std::min(offset, sql.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (sql[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  std::string where = "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
  if (offset >= sql.size()) return where + " (end of input)";
  std::string near = sql.substr(offset, 20);
  std::replace(near.begin(), near.end(), '\n', ' ');
  return where + " near '" + near + "'";
}

}  // namespace

SyntaxError::SyntaxError(const std::string& sql, size_t offset, const std::string& problem)
    : Error("SQL syntax error at " + describe_position(sql, offset) + ": " + problem), offset_(offset) {}

}  // namespace relmem::sql
