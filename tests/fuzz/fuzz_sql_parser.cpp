// libFuzzer target for the SQL front end and the executor's statement gate. The gate's text checks (the statement
// keyword past comments and CTEs, the UTF-8 check and repair) must hold for any bytes: the keyword is one upper-case
// word, valid_utf8() always gives valid UTF-8 and leaves valid text unchanged. Any input may be rejected with
// relmem::sql::SyntaxError (which inspect() then reports as its one diagnostic), but nothing may crash, and whatever
// parses must (1) render to text that parses and renders to itself, (2) survive rewriting every literal to itself,
// and (3) go through name resolution, condition extraction and the detector without throwing.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "relmem/sql/inspector.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/rewrite.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "../cpp/test_sql_schema.hpp"
#include "statement_gate_properties.hpp"

namespace {

[[noreturn]] void fail(const char* property, const std::string& sql, const std::string& detail) {
  std::fprintf(stderr, "property violated: %s\ninput: %s\ndetail: %s\n", property, sql.c_str(), detail.c_str());
  std::abort();
}

std::string rewrite_to_itself(const std::string& sql, const relmem::sql::Select& select) {
  using namespace relmem::sql;
  std::map<int, LiteralValue> same;
  for (const Expr* literal : literals(select)) {
    if (literal->literal_kind == LiteralKind::String) same.emplace(literal->literal_index, LiteralValue::string(literal->value));
    if (literal->literal_kind == LiteralKind::Number) same.emplace(literal->literal_index, LiteralValue::number(literal->value));
    if (literal->literal_kind == LiteralKind::Null) same.emplace(literal->literal_index, LiteralValue::null());
  }
  return rewrite_literals(sql, same);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace relmem::sql;
  static const relmem::Schema schema = relmem_test::concert_schema();
  const std::string sql(reinterpret_cast<const char*>(data), size);
  check_statement_gate(sql);
  std::optional<Query> query;
  try {
    query.emplace(sql, schema);
  } catch (const SyntaxError&) {
    const std::vector<Diagnostic> diagnostics = inspect(sql, schema);  // must not throw
    if (diagnostics.size() != 1 || diagnostics[0].kind != DiagnosticKind::Syntax)
      fail("inspect() reports a syntax error as its one diagnostic", sql, std::to_string(diagnostics.size()));
    return 0;
  }
  const Select& select = query->select();
  const std::string once = render(select);
  try {
    const std::string twice = render(parse(once));
    if (twice != once) fail("render(parse(render(x))) == render(x)", sql, once + "\n  vs\n" + twice);
    parse(rewrite_to_itself(sql, select));
  } catch (const relmem::Error& error) {
    fail("rendered and rewritten SQL parses", sql, once + "\n" + error.what());
  }
  query->conditions();
  query->tables();
  inspect(*query);
  Query(sql).conditions();
  return 0;
}
