#include <algorithm>

#include "parser_rules.hpp"
#include "relmem/sql/render.hpp"

namespace relmem::sql {

ExprPtr Parser::node(ExprKind kind, size_t start) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->start = start;
  return expr;
}

ExprPtr Parser::finish(ExprPtr expr) {
  expr->end = std::max(expr->end, last_end());
  int height = height_of(expr->select);
  for (const ExprPtr& arg : expr->args) height = std::max(height, height_of(arg));
  expr->height = height + 1;
  check_height(expr->height, expr->start);
  return expr;
}

ExprPtr Parser::binary(std::string op, ExprPtr left, ExprPtr right) {
  ExprPtr expr = node(ExprKind::Binary, left->start);
  expr->op = std::move(op);
  expr->args.push_back(std::move(left));
  expr->args.push_back(std::move(right));
  return finish(std::move(expr));
}

ExprPtr Parser::parse_expr() {
  Nesting nesting(*this);
  ExprPtr left = parse_and();
  while (accept_keyword("OR")) left = binary("OR", std::move(left), parse_and());
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (accept_keyword("AND")) left = binary("AND", std::move(left), parse_not());
  return left;
}

ExprPtr Parser::parse_not() {
  if (!at_keyword("NOT")) return parse_equality();
  Nesting nesting(*this);
  ExprPtr expr = node(ExprKind::Unary, advance().start);
  expr->op = "NOT";
  expr->args.push_back(parse_not());
  return finish(std::move(expr));
}

ExprPtr Parser::parse_equality() {
  ExprPtr left = parse_relational();
  while (true) {
    const Token& token = peek();
    if (token.kind == TokenKind::Operator &&
        (token.text == "=" || token.text == "==" || token.text == "!=" || token.text == "<>")) {
      std::string op = advance().text;
      left = binary(op, std::move(left), parse_relational());
      continue;
    }
    if (accept_keyword("IS")) {
      std::string op = accept_keyword("NOT") ? "IS NOT" : "IS";
      if (accept_keyword("DISTINCT")) {
        expect_keyword("FROM");
        op = op == "IS" ? "IS DISTINCT FROM" : "IS NOT DISTINCT FROM";
      }
      left = binary(op, std::move(left), parse_relational());
      continue;
    }
    if (at_keyword("ISNULL") || at_keyword("NOTNULL") || (at_keyword("NOT") && at_keyword("NULL", 1))) {
      ExprPtr expr = node(ExprKind::IsNull, left->start);
      if (accept_keyword("ISNULL")) {
        expr->negated = false;
      } else if (accept_keyword("NOTNULL")) {
        expr->negated = true;
      } else {  // NOT NULL
        advance();
        advance();
        expr->negated = true;
      }
      expr->args.push_back(std::move(left));
      left = finish(std::move(expr));
      continue;
    }
    bool negated = at_keyword("NOT");
    size_t word = negated ? 1 : 0;
    if (at_keyword("IN", word)) {
      if (negated) advance();
      advance();
      left = parse_in(std::move(left), negated);
    } else if (at_keyword("LIKE", word) || at_keyword("GLOB", word) || at_keyword("REGEXP", word) ||
               at_keyword("MATCH", word)) {
      if (negated) advance();
      ExprPtr expr = node(ExprKind::Like, left->start);
      expr->op = to_upper(advance().text);
      expr->negated = negated;
      expr->args.push_back(std::move(left));
      expr->args.push_back(parse_relational());
      if (accept_keyword("ESCAPE")) expr->args.push_back(parse_relational());
      left = finish(std::move(expr));
    } else if (at_keyword("BETWEEN", word)) {
      if (negated) advance();
      advance();
      ExprPtr expr = node(ExprKind::Between, left->start);
      expr->negated = negated;
      expr->args.push_back(std::move(left));
      expr->args.push_back(parse_relational());
      expect_keyword("AND");
      expr->args.push_back(parse_relational());
      left = finish(std::move(expr));
    } else {
      return left;
    }
  }
}

ExprPtr Parser::parse_in(ExprPtr value, bool negated) {
  ExprPtr expr = node(ExprKind::In, value->start);
  expr->negated = negated;
  expr->args.push_back(std::move(value));
  expect_op("(");
  if (at_keyword("SELECT") || at_keyword("WITH") || at_keyword("VALUES")) {
    expr->select = std::make_unique<Select>(parse_select());
  } else if (!at_op(")")) {
    do {
      expr->args.push_back(parse_expr());
    } while (accept_op(","));
  }
  expect_op(")");
  return finish(std::move(expr));
}

template <typename Next>
ExprPtr Parser::parse_level(std::initializer_list<const char*> ops, Next next) {
  ExprPtr left = (this->*next)();
  while (true) {
    const Token& token = peek();
    if (token.kind != TokenKind::Operator) return left;
    auto match = std::find_if(ops.begin(), ops.end(), [&](const char* op) { return token.text == op; });
    if (match == ops.end()) return left;
    advance();
    left = binary(*match, std::move(left), (this->*next)());
  }
}

ExprPtr Parser::parse_relational() { return parse_level({"<", "<=", ">", ">="}, &Parser::parse_bitwise); }
ExprPtr Parser::parse_bitwise() { return parse_level({"&", "|", "<<", ">>"}, &Parser::parse_additive); }
ExprPtr Parser::parse_additive() { return parse_level({"+", "-"}, &Parser::parse_multiplicative); }
ExprPtr Parser::parse_multiplicative() { return parse_level({"*", "/", "%"}, &Parser::parse_concat); }
ExprPtr Parser::parse_concat() { return parse_level({"||", "->", "->>"}, &Parser::parse_collate); }

ExprPtr Parser::parse_collate() {
  ExprPtr expr = parse_unary();
  while (accept_keyword("COLLATE")) {
    ExprPtr collate = node(ExprKind::Collate, expr->start);
    collate->op = render_name(parse_name("a collation name"));
    collate->args.push_back(std::move(expr));
    expr = finish(std::move(collate));
  }
  return expr;
}

ExprPtr Parser::parse_unary() {
  const Token& token = peek();
  bool sign = at_op("-") || at_op("+") || at_op("~");
  if (!sign && !at_keyword("NOT")) return parse_primary();
  Nesting nesting(*this);
  size_t start = advance().start;
  if (token.text == "-" && peek().kind == TokenKind::Number) {
    ExprPtr literal = parse_primary();
    literal->value = "-" + literal->value;
    literal->start = start;
    return literal;
  }
  ExprPtr expr = node(ExprKind::Unary, start);
  expr->op = sign ? token.text : "NOT";
  // A NOT in operand position (a = NOT b) negates one comparison-level operand.
  expr->args.push_back(sign ? parse_unary() : parse_equality());
  return finish(std::move(expr));
}

ExprPtr Parser::literal(LiteralKind kind, const Token& token) {
  ExprPtr expr = node(ExprKind::Literal, token.start);
  expr->literal_kind = kind;
  expr->value = token.text;
  expr->literal_index = literal_count_++;
  return finish(std::move(expr));
}

ExprPtr Parser::parse_primary() {
  const Token& token = peek();
  switch (token.kind) {
    case TokenKind::Number:
      return literal(LiteralKind::Number, advance());
    case TokenKind::String: {
      ExprPtr expr = literal(LiteralKind::String, advance());
      expr->quote = '\'';
      return expr;
    }
    case TokenKind::Blob:
      return literal(LiteralKind::Blob, advance());
    case TokenKind::DoubleQuoted:
      if (at_op(".", 1)) return parse_name_expression();
      {
        ExprPtr expr = literal(LiteralKind::String, advance());
        expr->quote = '"';
        return expr;
      }
    case TokenKind::QuotedName:
      return parse_name_expression();
    case TokenKind::Operator:
      if (at_op("(")) return parse_parenthesised();
      fail("expected an expression");
    case TokenKind::End:
      fail("expected an expression");
    case TokenKind::Word:
      break;
  }
  if (at_keyword("NULL")) return literal(LiteralKind::Null, advance());
  for (const char* keyword : {"TRUE", "FALSE", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP"}) {
    if (at_keyword(keyword) && !at_op(".", 1) && !at_op("(", 1)) {
      ExprPtr expr = literal(LiteralKind::Keyword, advance());
      expr->value = keyword;
      return expr;
    }
  }
  if (at_keyword("CASE")) return parse_case();
  if (at_keyword("CAST") && at_op("(", 1)) return parse_cast();
  if (at_keyword("EXISTS")) {
    ExprPtr expr = node(ExprKind::Exists, advance().start);
    expect_op("(");
    expr->select = std::make_unique<Select>(parse_select());
    expect_op(")");
    return finish(std::move(expr));
  }
  if (at_keyword("SELECT") || at_keyword("WITH")) fail("a subquery must be in parentheses");
  if (at_keyword("RAISE")) fail("RAISE is not supported");
  return parse_name_expression();
}

ExprPtr Parser::parse_parenthesised() {
  size_t start = advance().start;
  if (at_keyword("SELECT") || at_keyword("WITH") || at_keyword("VALUES")) {
    ExprPtr expr = node(ExprKind::Subquery, start);
    expr->select = std::make_unique<Select>(parse_select());
    expect_op(")");
    return finish(std::move(expr));
  }
  ExprPtr inner = parse_expr();
  if (at_op(",")) fail("row values are not supported");
  expect_op(")");
  return inner;
}

ExprPtr Parser::parse_name_expression() {
  size_t start = peek().start;
  if (peek().kind == TokenKind::Word && at_op("(", 1)) return parse_function();
  Name first = parse_name("an expression");
  ExprPtr expr = node(ExprKind::Column, start);
  if (!accept_op(".")) {
    expr->column = std::move(first);
    return finish(std::move(expr));
  }
  Name second = parse_name("a column name", true);
  if (accept_op(".")) {
    expr->schema = std::move(first);
    expr->table = std::move(second);
    expr->column = parse_name("a column name", true);
  } else {
    expr->table = std::move(first);
    expr->column = std::move(second);
  }
  return finish(std::move(expr));
}

ExprPtr Parser::parse_function() {
  const Token& name = advance();
  ExprPtr expr = node(ExprKind::Function, name.start);
  expr->op = name.text;
  expect_op("(");
  if (at_op("*")) {
    advance();
    expr->star_argument = true;
  } else if (!at_op(")")) {
    if (accept_keyword("DISTINCT")) {
      expr->distinct = true;
    } else {
      accept_keyword("ALL");
    }
    do {
      expr->args.push_back(parse_expr());
    } while (accept_op(","));
  }
  expect_op(")");
  if (at_keyword("FILTER") && at_op("(", 1)) fail("FILTER clauses are not supported");
  if (at_keyword("OVER")) fail("window functions are not supported");
  return finish(std::move(expr));
}

ExprPtr Parser::parse_case() {
  ExprPtr expr = node(ExprKind::Case, advance().start);
  if (!at_keyword("WHEN")) {
    expr->has_operand = true;
    expr->args.push_back(parse_expr());
  }
  if (!at_keyword("WHEN")) fail("expected WHEN");
  while (accept_keyword("WHEN")) {
    expr->args.push_back(parse_expr());
    expect_keyword("THEN");
    expr->args.push_back(parse_expr());
  }
  if (accept_keyword("ELSE")) {
    expr->has_else = true;
    expr->args.push_back(parse_expr());
  }
  expect_keyword("END");
  return finish(std::move(expr));
}

ExprPtr Parser::parse_cast() {
  ExprPtr expr = node(ExprKind::Cast, advance().start);
  expect_op("(");
  expr->args.push_back(parse_expr());
  expect_keyword("AS");
  expr->op = parse_type_name();
  expect_op(")");
  return finish(std::move(expr));
}

std::string Parser::parse_type_name() {
  if (!at_name()) fail("expected a type name");
  std::string type;
  while (at_name()) type += (type.empty() ? "" : " ") + render_name(parse_name("a type name"));
  if (accept_op("(")) {
    type += "(";
    while (true) {
      if (at_op("-") || at_op("+")) type += advance().text;
      if (peek().kind != TokenKind::Number) fail("expected a number in the type size");
      type += advance().text;
      if (!accept_op(",")) break;
      type += ", ";
    }
    expect_op(")");
    type += ")";
  }
  return type;
}

}  // namespace relmem::sql
