#include "relmem/sql/rewrite.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "relmem/common.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"

namespace relmem::sql {

LiteralValue LiteralValue::null() { return LiteralValue("NULL"); }

LiteralValue LiteralValue::string(std::string value) { return LiteralValue(quote_string(value)); }

LiteralValue LiteralValue::number(std::string text) {
  static const std::regex kNumber(R"(-?(0[xX][0-9a-fA-F]+|([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?))");
  if (!std::regex_match(text, kNumber)) throw Error("not a SQL number literal: '" + text + "'");
  return LiteralValue(std::move(text));
}

LiteralValue LiteralValue::number(double value) {
  if (!std::isfinite(value)) throw Error("a SQL number literal must be finite");
  char buffer[32];
  for (int precision = 15; precision <= 17; ++precision) {  // the shortest text that reads back as `value`
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  // %g prints integral doubles without a point; keep them REAL so SQLite compares them as it would the double.
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return LiteralValue(text);
}

LiteralValue LiteralValue::number(int64_t value) { return LiteralValue(std::to_string(value)); }

std::string LiteralValue::to_sql() const { return sql_; }

std::string rewrite_literals(const std::string& sql, const std::map<int, LiteralValue>& replacements) {
  Select select = parse(sql);
  std::vector<const Expr*> found = literals(select);
  std::string out;
  size_t copied = 0;
  for (const auto& [index, value] : replacements) {
    if (index < 0 || static_cast<size_t>(index) >= found.size()) {
      throw Error("no literal with index " + std::to_string(index) + " (the SQL has " +
                  std::to_string(found.size()) + ")");
    }
    const Expr& literal = *found[index];
    out.append(sql, copied, literal.start - copied);
    std::string text = value.to_sql();
    // "x - -5" must not become "x --5", which would start a comment.
    if (!text.empty() && text[0] == '-' && !out.empty() && out.back() == '-') out += ' ';
    out += text;
    copied = literal.end;
  }
  out.append(sql, copied, std::string::npos);
  return out;
}

}  // namespace relmem::sql
