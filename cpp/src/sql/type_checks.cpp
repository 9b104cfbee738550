// Literals compared with columns whose declared type they cannot match.
#include <cstdlib>

#include "checks.hpp"
#include "words.hpp"

namespace relmem::sql::checks {
namespace {

enum class ValueClass { Text, Numeric, Other };

// By declared type, close to SQLite's affinity rules; dates, times and booleans are Other because SQLite
// databases store them as text or numbers alike.
ValueClass value_class(const std::string& declared_type) {
  std::string type = to_upper(declared_type);
  auto has = [&](const char* part) { return type.find(part) != std::string::npos; };
  if (has("DATE") || has("TIME") || has("BOOL") || has("YEAR")) return ValueClass::Other;
  if (has("INT")) return ValueClass::Numeric;
  if (has("CHAR") || has("CLOB") || has("TEXT")) return ValueClass::Text;
  if (has("REAL") || has("FLOA") || has("DOUB") || has("NUMERIC") || has("DECIMAL") || has("NUMBER")) {
    return ValueClass::Numeric;
  }
  return ValueClass::Other;
}

bool looks_numeric(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  std::strtod(begin, &end);
  if (end == begin) return false;
  while (*end == ' ') ++end;
  return *end == '\0';
}

class TypeChecker {
 public:
  TypeChecker(const Query& query, Report& report) : query_(query), report_(report) {}

  void visit(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Binary:
        if (e.op == "=" || e.op == "==" || e.op == "!=" || e.op == "<>" || e.op == "<" || e.op == "<=" ||
            e.op == ">" || e.op == ">=") {
          compare(*e.args[0], *e.args[1]);
          compare(*e.args[1], *e.args[0]);
        }
        break;
      case ExprKind::Between:
        compare(*e.args[0], *e.args[1]);
        compare(*e.args[0], *e.args[2]);
        break;
      case ExprKind::In:
        for (size_t i = 1; i < e.args.size(); ++i) compare(*e.args[0], *e.args[i]);
        break;
      default: break;
    }
  }

 private:
  void compare(const Expr& column_side, const Expr& literal) {
    if (literal.kind != ExprKind::Literal || query_.resolution().binding(literal) != nullptr) return;
    const Binding* binding = column_binding(query_.resolution(), column_side);
    if (binding == nullptr || binding->status != BindingStatus::Resolved || binding->column == nullptr) return;
    const Column& column = *binding->column;
    ValueClass expected = value_class(column.type);
    std::string name = binding->table_name + "." + column.name;
    if (expected == ValueClass::Numeric && literal.literal_kind == LiteralKind::String &&
        !looks_numeric(literal.value)) {
      report_.add(DiagnosticKind::TypeMismatch, literal.start, literal.end,
                  name + " is " + column.type + " but is compared with the text '" + literal.value + "'");
    } else if (expected == ValueClass::Text && literal.literal_kind == LiteralKind::Number) {
      report_.add(DiagnosticKind::TypeMismatch, literal.start, literal.end,
                  name + " is " + column.type + " but is compared with the number " + literal.value +
                      "; SQLite compares it as text");
    }
  }

  const Query& query_;
  Report& report_;
};

}  // namespace

void check_types(const Query& query, Report& report) {
  TypeChecker checker(query, report);
  for_each_expr(query.select(), [&](const Expr& e) { checker.visit(e); });
}

}  // namespace relmem::sql::checks
