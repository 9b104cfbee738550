#pragma once
// Replaces chosen literals of a SELECT in place, leaving every other byte of the text as it was.
#include <cstdint>
#include <map>
#include <string>

namespace relmem::sql {

// A value to write in place of a literal.
class LiteralValue {
 public:
  static LiteralValue null();
  static LiteralValue string(std::string value);
  // Throws relmem::Error unless `text` is a decimal or hexadecimal SQL number (optionally negative).
  static LiteralValue number(std::string text);
  static LiteralValue number(double value);  // throws for NaN and infinities
  static LiteralValue number(int64_t value);

  std::string to_sql() const;

 private:
  explicit LiteralValue(std::string sql) : sql_(std::move(sql)) {}
  std::string sql_;
};

// `replacements` maps literal_index (see relmem::sql::literals) to the new value. Throws SyntaxError when the SQL
// does not parse and relmem::Error for an index that names no literal.
std::string rewrite_literals(const std::string& sql, const std::map<int, LiteralValue>& replacements);

}  // namespace relmem::sql
