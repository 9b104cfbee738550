#include "relmem/sql/conditions.hpp"

#include <algorithm>

namespace relmem::sql {
namespace {

class Extractor {
 public:
  explicit Extractor(const Resolution& resolution) : resolution_(resolution) {}

  void visit(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Binary: comparison(e); break;
      case ExprKind::Like: add(e, *e.args[0], *e.args[1], std::string(e.negated ? "NOT " : "") + e.op); break;
      case ExprKind::Between:
        for (size_t i = 1; i <= 2; ++i) add(e, *e.args[0], *e.args[i], e.negated ? "NOT BETWEEN" : "BETWEEN");
        break;
      case ExprKind::In:
        for (size_t i = 1; i < e.args.size(); ++i) add(e, *e.args[0], *e.args[i], e.negated ? "NOT IN" : "IN");
        break;
      default: break;
    }
  }

  std::vector<Condition> take() {
    std::sort(found_.begin(), found_.end(),
              [](const Condition& a, const Condition& b) { return a.literal_index < b.literal_index; });
    return std::move(found_);
  }

 private:
  void comparison(const Expr& e) {
    static const char* const kSymmetric[] = {"=", "!=", "IS", "IS NOT", "IS DISTINCT FROM", "IS NOT DISTINCT FROM"};
    std::string op = e.op == "==" ? "=" : e.op == "<>" ? "!=" : e.op;
    bool symmetric = std::find(std::begin(kSymmetric), std::end(kSymmetric), op) != std::end(kSymmetric);
    bool ordering = op == "<" || op == "<=" || op == ">" || op == ">=";
    if (!symmetric && !ordering) return;
    if (column_of(*e.args[0])) {
      add(e, *e.args[0], *e.args[1], op);
    } else if (ordering) {
      std::string flipped = op[0] == '<' ? ">" + op.substr(1) : "<" + op.substr(1);
      add(e, *e.args[1], *e.args[0], flipped);
    } else {
      add(e, *e.args[1], *e.args[0], op);
    }
  }

  // The column binding of `e` (through COLLATE), or nullptr when it is not a column of a FROM item.
  const Binding* column_of(const Expr& e) const {
    const Expr* inner = &e;
    while (inner->kind == ExprKind::Collate) inner = inner->args[0].get();
    const Binding* binding = resolution_.binding(*inner);
    if (binding == nullptr || binding->status == BindingStatus::ResultAlias) return nullptr;
    return binding;
  }

  bool is_value_literal(const Expr& e) const {
    if (e.kind != ExprKind::Literal || resolution_.binding(e) != nullptr) return false;
    return e.literal_kind == LiteralKind::String || e.literal_kind == LiteralKind::Number ||
           e.literal_kind == LiteralKind::Null;
  }

  void add(const Expr& comparison, const Expr& column, const Expr& literal, const std::string& op) {
    const Binding* binding = column_of(column);
    if (binding == nullptr || !is_value_literal(literal)) return;
    Condition condition;
    condition.table = binding->table_name;
    condition.column = binding->column_name;
    condition.op = op;
    condition.literal_kind = literal.literal_kind;
    condition.literal = literal.literal_kind == LiteralKind::Null ? "NULL" : literal.value;
    condition.literal_index = literal.literal_index;
    condition.start = literal.start;
    condition.end = literal.end;
    condition.column_start = column.start;
    condition.column_end = column.end;
    condition.comparison_start = comparison.start;
    condition.comparison_end = comparison.end;
    found_.push_back(std::move(condition));
  }

  const Resolution& resolution_;
  std::vector<Condition> found_;
};

}  // namespace

std::vector<Condition> extract_conditions(const Select& select, const Resolution& resolution) {
  Extractor extractor(resolution);
  for_each_expr(select, [&](const Expr& e) { extractor.visit(e); });
  return extractor.take();
}

}  // namespace relmem::sql
