#pragma once
// The executor's statement gate, checked on any bytes: the statement keyword (past comments and CTEs) is one
// upper-case word, comment skipping stays inside the text, valid_utf8() always gives valid UTF-8 and changes exactly
// the texts that are not. Shared by both fuzz targets; `fail` reports a violated property and aborts.
#include <cctype>
#include <string>

#include "../../cpp/src/catalog/statement_keyword.hpp"
#include "../../cpp/src/common/utf8.hpp"

namespace {

[[noreturn]] void fail(const char* property, const std::string& sql, const std::string& detail);

inline void check_statement_gate(const std::string& sql) {
  const std::string keyword = relmem::statement_keyword(sql);
  for (char c : keyword)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '$'))
      fail("the statement keyword is one upper-case word", sql, keyword);
  relmem::is_other_statement_keyword(keyword);
  if (relmem::skip_space_and_comments(sql, 0) > sql.size()) fail("skipping comments stays inside the text", sql, "");
  const std::string repaired = relmem::valid_utf8(sql);
  if (!relmem::is_valid_utf8(repaired)) fail("valid_utf8() gives valid UTF-8", sql, repaired);
  if (relmem::is_valid_utf8(sql) != (repaired == sql)) fail("valid_utf8() changes exactly the invalid texts", sql, repaired);
}

}  // namespace
