#include "relmem/sql/render.hpp"

#include "words.hpp"

namespace relmem::sql {
namespace {

std::string quote_with(const std::string& text, char open, char close) {
  std::string out(1, open);
  for (char c : text) {
    out += c;
    if (c == close) out += c;
  }
  return out + close;
}

// Binding strength, weakest first, following SQLite's operator precedence table.
enum Precedence {
  kOr = 1,
  kAnd,
  kNot,
  kEquality,  // = == != <> IS IN LIKE BETWEEN and the NULL tests
  kRelational,
  kBitwise,
  kAdditive,
  kMultiplicative,
  kConcat,
  kCollate,
  kUnary,
  kPrimary,
};

int binary_precedence(const std::string& op) {
  if (op == "OR") return kOr;
  if (op == "AND") return kAnd;
  if (op == "<" || op == "<=" || op == ">" || op == ">=") return kRelational;
  if (op == "&" || op == "|" || op == "<<" || op == ">>") return kBitwise;
  if (op == "+" || op == "-") return kAdditive;
  if (op == "*" || op == "/" || op == "%") return kMultiplicative;
  if (op == "||" || op == "->" || op == "->>") return kConcat;
  return kEquality;
}

int precedence(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::Binary: return binary_precedence(expr.op);
    case ExprKind::Unary: return expr.op == "NOT" ? kNot : kUnary;
    case ExprKind::Like:
    case ExprKind::Between:
    case ExprKind::In:
    case ExprKind::IsNull: return kEquality;
    case ExprKind::Collate: return kCollate;
    case ExprKind::Literal: return !expr.value.empty() && expr.value[0] == '-' ? kUnary : kPrimary;
    default: return kPrimary;
  }
}

class Renderer {
 public:
  std::string select(const Select& select) {
    std::string out;
    if (!select.ctes.empty()) {
      out += select.recursive ? "WITH RECURSIVE " : "WITH ";
      for (size_t i = 0; i < select.ctes.size(); ++i) {
        if (i > 0) out += ", ";
        out += cte(select.ctes[i]);
      }
      out += " ";
    }
    for (size_t i = 0; i < select.cores.size(); ++i) {
      if (i > 0) out += " " + select.compound_ops[i - 1] + " ";
      out += core(select.cores[i]);
    }
    return out + order_and_limit(select.order_by, select.limit, select.offset);
  }

  std::string expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Literal: return literal(e);
      case ExprKind::Column: return qualified(e) + render_name(e.column);
      case ExprKind::Star: return qualified(e) + "*";
      case ExprKind::Unary: {
        if (e.op == "NOT") return "NOT " + operand(*e.args[0], kNot);
        std::string inner = operand(*e.args[0], kUnary);
        return e.op + (!inner.empty() && inner[0] == e.op[0] ? " " : "") + inner;
      }
      case ExprKind::Binary: {
        int level = binary_precedence(e.op);
        return operand(*e.args[0], level) + " " + e.op + " " + operand(*e.args[1], level + 1);
      }
      case ExprKind::Like: {
        std::string out = operand(*e.args[0], kEquality) + (e.negated ? " NOT " : " ") + e.op + " " +
                          operand(*e.args[1], kRelational);
        if (e.args.size() > 2) out += " ESCAPE " + operand(*e.args[2], kRelational);
        return out;
      }
      case ExprKind::Between:
        return operand(*e.args[0], kEquality) + (e.negated ? " NOT BETWEEN " : " BETWEEN ") +
               operand(*e.args[1], kRelational) + " AND " + operand(*e.args[2], kRelational);
      case ExprKind::In: {
        std::string out = operand(*e.args[0], kEquality) + (e.negated ? " NOT IN (" : " IN (");
        if (e.select) return out + select(*e.select) + ")";
        for (size_t i = 1; i < e.args.size(); ++i) out += (i > 1 ? ", " : "") + expr(*e.args[i]);
        return out + ")";
      }
      case ExprKind::IsNull: return operand(*e.args[0], kEquality) + (e.negated ? " IS NOT NULL" : " IS NULL");
      case ExprKind::Exists: return "EXISTS (" + select(*e.select) + ")";
      case ExprKind::Subquery: return "(" + select(*e.select) + ")";
      case ExprKind::Case: return case_expr(e);
      case ExprKind::Cast: return "CAST(" + expr(*e.args[0]) + " AS " + e.op + ")";
      case ExprKind::Function: return function(e);
      case ExprKind::Collate: return operand(*e.args[0], kCollate) + " COLLATE " + e.op;
    }
    return "";
  }

 private:
  std::string order_and_limit(const std::vector<OrderTerm>& order_by, const ExprPtr& limit, const ExprPtr& offset) {
    std::string out;
    if (!order_by.empty()) {
      out += " ORDER BY ";
      for (size_t i = 0; i < order_by.size(); ++i) {
        const OrderTerm& term = order_by[i];
        if (i > 0) out += ", ";
        out += expr(*term.expr);
        if (!term.direction.empty()) out += " " + term.direction;
        if (!term.nulls.empty()) out += " " + term.nulls;
      }
    }
    if (limit) out += " LIMIT " + expr(*limit);
    if (offset) out += " OFFSET " + expr(*offset);
    return out;
  }

  std::string operand(const Expr& e, int min_precedence) {
    std::string text = expr(e);
    return precedence(e) < min_precedence ? "(" + text + ")" : text;
  }

  static std::string qualified(const Expr& e) {
    std::string out;
    if (!e.schema.empty()) out += render_name(e.schema) + ".";
    if (!e.table.empty()) out += render_name(e.table) + ".";
    return out;
  }

  static std::string literal(const Expr& e) {
    switch (e.literal_kind) {
      case LiteralKind::String: return e.quote == '"' ? quote_with(e.value, '"', '"') : quote_string(e.value);
      case LiteralKind::Blob: return "X'" + e.value + "'";
      case LiteralKind::Null: return "NULL";
      case LiteralKind::Number:
      case LiteralKind::Keyword: return e.value;
    }
    return e.value;
  }

  std::string function(const Expr& e) {
    std::string out = e.op + "(";
    if (e.star_argument) return out + "*)";
    if (e.distinct) out += "DISTINCT ";
    for (size_t i = 0; i < e.args.size(); ++i) out += (i > 0 ? ", " : "") + expr(*e.args[i]);
    return out + ")";
  }

  std::string case_expr(const Expr& e) {
    std::string out = "CASE";
    size_t i = 0;
    if (e.has_operand) out += " " + expr(*e.args[i++]);
    size_t whens_end = e.args.size() - (e.has_else ? 1 : 0);
    for (; i + 1 < whens_end; i += 2) {
      out += " WHEN " + expr(*e.args[i]) + " THEN " + expr(*e.args[i + 1]);
    }
    if (e.has_else) out += " ELSE " + expr(*e.args.back());
    return out + " END";
  }

  std::string cte(const Cte& c) {
    std::string out = render_name(c.name);
    if (!c.columns.empty()) {
      out += "(";
      for (size_t i = 0; i < c.columns.size(); ++i) out += (i > 0 ? ", " : "") + render_name(c.columns[i]);
      out += ")";
    }
    out += " AS ";
    if (!c.materialized.empty()) out += c.materialized + " ";
    return out + "(" + select(*c.select) + ")";
  }

  std::string core(const SelectCore& c) {
    std::string out = "SELECT ";
    if (c.distinct) out += "DISTINCT ";
    if (c.all) out += "ALL ";
    for (size_t i = 0; i < c.columns.size(); ++i) {
      const ResultColumn& column = c.columns[i];
      if (i > 0) out += ", ";
      out += expr(*column.expr);
      if (!column.alias.empty()) out += (column.alias_with_as ? " AS " : " ") + render_name(column.alias);
    }
    if (!c.from.empty()) out += " FROM " + join_list(c.from);
    if (c.where) out += " WHERE " + expr(*c.where);
    if (!c.group_by.empty()) {
      out += " GROUP BY ";
      for (size_t i = 0; i < c.group_by.size(); ++i) out += (i > 0 ? ", " : "") + expr(*c.group_by[i]);
    }
    if (c.having) out += " HAVING " + expr(*c.having);
    return out + order_and_limit(c.misplaced_order_by, c.misplaced_limit, c.misplaced_offset);
  }

  std::string join_list(const std::vector<TableRef>& items) {
    std::string out;
    for (const TableRef& item : items) {
      if (item.join == ",") {
        out += ", ";
      } else if (!item.join.empty()) {
        out += " " + item.join + " ";
      }
      out += table_ref(item);
    }
    return out;
  }

  std::string table_ref(const TableRef& ref) {
    std::string out;
    if (ref.subquery) {
      out = "(" + select(*ref.subquery) + ")";
    } else if (!ref.group.empty()) {
      out = "(" + join_list(ref.group) + ")";
    } else {
      if (!ref.schema.empty()) out += render_name(ref.schema) + ".";
      out += render_name(ref.name);
    }
    if (!ref.alias.empty()) out += (ref.alias_with_as ? " AS " : " ") + render_name(ref.alias);
    if (ref.on) out += " ON " + expr(*ref.on);
    if (!ref.using_columns.empty()) {
      out += " USING (";
      for (size_t i = 0; i < ref.using_columns.size(); ++i) {
        out += (i > 0 ? ", " : "") + render_name(ref.using_columns[i]);
      }
      out += ")";
    }
    return out;
  }
};

}  // namespace

std::string quote_string(const std::string& value) { return quote_with(value, '\'', '\''); }

std::string render_name(const Name& name) {
  switch (name.quote) {
    case '`': return quote_with(name.text, '`', '`');
    case '[': return name.text.find(']') == std::string::npos ? "[" + name.text + "]" : quote_with(name.text, '"', '"');
    case '\'': return quote_string(name.text);
    case '"': return quote_with(name.text, '"', '"');
    default: return is_bare_identifier(name.text) ? name.text : quote_with(name.text, '"', '"');
  }
}

std::string render(const Select& select) { return Renderer().select(select); }
std::string render(const Expr& expr) { return Renderer().expr(expr); }

}  // namespace relmem::sql
