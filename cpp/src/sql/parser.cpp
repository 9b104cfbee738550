#include "relmem/sql/parser.hpp"

#include <algorithm>

#include "parser_rules.hpp"

namespace relmem::sql {

Select Parser::parse_statement() {
  if (at_end()) fail("expected a SELECT statement");
  Select select = parse_select();
  while (accept_op(";")) {
  }
  if (!at_end()) fail("unexpected text after the end of the statement");
  return select;
}

bool Parser::at_name(size_t ahead, bool string_allowed) const {
  const Token& token = peek(ahead);
  if (token.kind == TokenKind::Word) return !is_reserved_word(token.text);
  return token.kind == TokenKind::QuotedName || token.kind == TokenKind::DoubleQuoted ||
         (string_allowed && token.kind == TokenKind::String);
}

Name Parser::parse_name(const char* what, bool string_allowed) {
  if (!at_name(0, string_allowed)) fail(std::string("expected ") + what);
  const Token& token = advance();
  return Name{token.text, quote_of(token)};
}

void Parser::parse_alias(Name& alias, bool& with_as) {
  with_as = accept_keyword("AS");
  if (with_as && peek().kind == TokenKind::String) {
    alias = Name{advance().text, '\''};
  } else if (at_name()) {
    alias = parse_name("an alias");
  } else if (with_as) {
    fail("expected an alias after AS");
  }
}

Select Parser::parse_select() {
  Nesting nesting(*this);
  Select select;
  select.start = peek().start;
  if (accept_keyword("WITH")) {
    select.recursive = accept_keyword("RECURSIVE");
    do {
      select.ctes.push_back(parse_cte());
    } while (accept_op(","));
  }
  select.cores.push_back(parse_core());
  while (true) {
    parse_order_and_limit(select.order_by, select.limit, select.offset);
    std::string op = parse_compound_operator();
    if (op.empty()) break;
    SelectCore& before = select.cores.back();
    before.misplaced_order_by = std::move(select.order_by);
    before.misplaced_limit = std::move(select.limit);
    before.misplaced_offset = std::move(select.offset);
    select.order_by.clear();
    select.compound_ops.push_back(op);
    select.cores.push_back(parse_core());
  }
  select.end = last_end();
  select.height = 1 + select_children_height(select);
  check_height(select.height, select.start);
  return select;
}

std::string Parser::parse_compound_operator() {
  if (accept_keyword("UNION")) return accept_keyword("ALL") ? "UNION ALL" : "UNION";
  if (accept_keyword("INTERSECT")) return "INTERSECT";
  if (accept_keyword("EXCEPT")) return "EXCEPT";
  return "";
}

void Parser::parse_order_and_limit(std::vector<OrderTerm>& order_by, ExprPtr& limit, ExprPtr& offset) {
  if (accept_keyword("ORDER")) {
    expect_keyword("BY");
    do {
      order_by.push_back(parse_order_term());
    } while (accept_op(","));
  }
  if (accept_keyword("LIMIT")) {
    limit = parse_expr();
    if (accept_keyword("OFFSET")) {
      offset = parse_expr();
    } else if (accept_op(",")) {  // LIMIT offset, count
      offset = std::move(limit);
      limit = parse_expr();
    }
  }
}

int Parser::select_children_height(const Select& select) {
  int height = std::max(height_of(select.limit), height_of(select.offset));
  for (const Cte& cte : select.ctes) height = std::max(height, height_of(cte.select));
  for (const OrderTerm& term : select.order_by) height = std::max(height, height_of(term.expr));
  for (const SelectCore& core : select.cores) {
    int core_height = std::max(height_of(core.where), height_of(core.having));
    for (const ResultColumn& column : core.columns) core_height = std::max(core_height, height_of(column.expr));
    for (const TableRef& ref : core.from) core_height = std::max(core_height, height_of(ref));
    for (const ExprPtr& expr : core.group_by) core_height = std::max(core_height, height_of(expr));
    for (const OrderTerm& term : core.misplaced_order_by) core_height = std::max(core_height, height_of(term.expr));
    core_height = std::max({core_height, height_of(core.misplaced_limit), height_of(core.misplaced_offset)});
    height = std::max(height, core_height + 1);
  }
  return height;
}

Cte Parser::parse_cte() {
  Cte cte;
  cte.name = parse_name("a CTE name");
  if (accept_op("(")) {
    do {
      cte.columns.push_back(parse_name("a column name"));
    } while (accept_op(","));
    expect_op(")");
  }
  expect_keyword("AS");
  if (accept_keyword("NOT")) {
    expect_keyword("MATERIALIZED");
    cte.materialized = "NOT MATERIALIZED";
  } else if (accept_keyword("MATERIALIZED")) {
    cte.materialized = "MATERIALIZED";
  }
  expect_op("(");
  cte.select = std::make_unique<Select>(parse_select());
  expect_op(")");
  return cte;
}

SelectCore Parser::parse_core() {
  SelectCore core;
  core.start = peek().start;
  if (at_keyword("VALUES")) fail("VALUES lists are not supported");
  expect_keyword("SELECT");
  if (accept_keyword("DISTINCT")) {
    core.distinct = true;
  } else if (accept_keyword("ALL")) {
    core.all = true;
  }
  do {
    core.columns.push_back(parse_result_column());
  } while (accept_op(","));
  if (accept_keyword("FROM")) core.from = parse_join_list();
  if (accept_keyword("WHERE")) core.where = parse_expr();
  if (accept_keyword("GROUP")) {
    expect_keyword("BY");
    do {
      core.group_by.push_back(parse_expr());
    } while (accept_op(","));
  }
  if (accept_keyword("HAVING")) core.having = parse_expr();
  core.end = last_end();
  return core;
}

ResultColumn Parser::parse_result_column() {
  ResultColumn column;
  if (at_op("*")) {
    column.expr = make_star(Name{}, Name{}, advance());
    return column;
  }
  if (at_name() && at_op(".", 1) && at_op("*", 2)) {
    size_t start = peek().start;
    Name table = parse_name("a table name");
    advance();
    column.expr = make_star(Name{}, table, advance());
    column.expr->start = start;
    return column;
  }
  column.expr = parse_expr();
  parse_alias(column.alias, column.alias_with_as);
  return column;
}

ExprPtr Parser::make_star(Name schema, Name table, const Token& star) {
  auto expr = std::make_unique<Expr>();
  expr->kind = ExprKind::Star;
  expr->schema = std::move(schema);
  expr->table = std::move(table);
  expr->start = star.start;
  expr->end = star.end;
  return expr;
}

OrderTerm Parser::parse_order_term() {
  OrderTerm term;
  term.expr = parse_expr();
  if (accept_keyword("ASC")) {
    term.direction = "ASC";
  } else if (accept_keyword("DESC")) {
    term.direction = "DESC";
  }
  if (accept_keyword("NULLS")) {
    if (accept_keyword("FIRST")) {
      term.nulls = "NULLS FIRST";
    } else {
      expect_keyword("LAST");
      term.nulls = "NULLS LAST";
    }
  }
  return term;
}

std::vector<TableRef> Parser::parse_join_list() {
  std::vector<TableRef> items;
  items.push_back(parse_table_ref(""));
  while (true) {
    std::string join = parse_join_operator();
    if (join.empty()) break;
    TableRef item = parse_table_ref(join);
    if (accept_keyword("ON")) {
      item.on = parse_expr();
    } else if (accept_keyword("USING")) {
      expect_op("(");
      do {
        item.using_columns.push_back(parse_name("a column name"));
      } while (accept_op(","));
      expect_op(")");
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::string Parser::parse_join_operator() {
  if (accept_op(",")) return ",";
  std::string join;
  auto add = [&](const char* word) { join += join.empty() ? word : std::string(" ") + word; };
  if (accept_keyword("NATURAL")) add("NATURAL");
  if (accept_keyword("LEFT")) {
    add("LEFT");
  } else if (accept_keyword("RIGHT")) {
    add("RIGHT");
  } else if (accept_keyword("FULL")) {
    add("FULL");
  } else if (accept_keyword("INNER")) {
    add("INNER");
  } else if (accept_keyword("CROSS")) {
    add("CROSS");
  }
  if ((join == "LEFT" || join == "RIGHT" || join == "FULL" || join == "NATURAL LEFT" || join == "NATURAL RIGHT" ||
       join == "NATURAL FULL") &&
      accept_keyword("OUTER")) {
    add("OUTER");
  }
  if (join.empty() && !at_keyword("JOIN")) return "";
  expect_keyword("JOIN");
  add("JOIN");
  return join;
}

TableRef Parser::parse_table_ref(const std::string& join) {
  TableRef ref;
  ref.join = join;
  ref.start = peek().start;
  if (accept_op("(")) {
    if (at_keyword("SELECT") || at_keyword("WITH") || at_keyword("VALUES")) {
      ref.subquery = std::make_unique<Select>(parse_select());
    } else {
      Nesting nesting(*this);
      ref.group = parse_join_list();
    }
    expect_op(")");
    ref.end = last_end();
    parse_alias(ref.alias, ref.alias_with_as);
  } else {
    ref.name = parse_name("a table name", true);
    if (accept_op(".")) {
      ref.schema = std::move(ref.name);
      ref.name = parse_name("a table name", true);
    }
    ref.end = last_end();
    if (at_op("(")) fail("table-valued functions are not supported");
    if (!at_indexed()) parse_alias(ref.alias, ref.alias_with_as);
    if (at_indexed()) fail("INDEXED BY clauses are not supported");
  }
  check_height(height_of(ref), ref.start);
  return ref;
}

bool Parser::at_indexed() const {
  return (at_keyword("INDEXED") && at_keyword("BY", 1)) || (at_keyword("NOT") && at_keyword("INDEXED", 1));
}

Select parse(const std::string& sql) { return Parser(sql, tokenize(sql)).parse_statement(); }

}  // namespace relmem::sql
