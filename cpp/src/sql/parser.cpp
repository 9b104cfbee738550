#include "relmem/sql/parser.hpp"

#include <algorithm>

#include "relmem/sql/lexer.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

int height_of(const ExprPtr& expr) { return expr ? expr->height : 0; }
int height_of(const std::unique_ptr<Select>& select) { return select ? select->height : 0; }

int height_of(const TableRef& ref) {
  int height = std::max(height_of(ref.subquery), height_of(ref.on));
  for (const TableRef& item : ref.group) height = std::max(height, height_of(item));
  return height + 1;
}

class Parser {
 public:
  Parser(const std::string& sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {}

  Select parse_statement() {
    if (at_end()) fail("expected a SELECT statement");
    Select select = parse_select();
    while (accept_op(";")) {
    }
    if (!at_end()) fail("unexpected text after the end of the statement");
    return select;
  }

 private:
  // ---- token helpers -------------------------------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& advance() {
    const Token& token = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return token;
  }
  size_t last_end() const { return pos_ == 0 ? 0 : tokens_[pos_ - 1].end; }
  bool at_end() const { return peek().kind == TokenKind::End; }

  bool at_keyword(const char* keyword, size_t ahead = 0) const {
    const Token& token = peek(ahead);
    return token.kind == TokenKind::Word && iequals(token.text, keyword);
  }
  bool accept_keyword(const char* keyword) {
    if (!at_keyword(keyword)) return false;
    advance();
    return true;
  }
  void expect_keyword(const char* keyword) {
    if (!accept_keyword(keyword)) fail(std::string("expected ") + keyword);
  }
  bool at_op(const char* op, size_t ahead = 0) const {
    const Token& token = peek(ahead);
    return token.kind == TokenKind::Operator && token.text == op;
  }
  bool accept_op(const char* op) {
    if (!at_op(op)) return false;
    advance();
    return true;
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) fail(std::string("expected '") + op + "'");
  }

  [[noreturn]] void fail(const std::string& problem) const { throw SyntaxError(sql_, peek().start, problem); }

  // Bounds the recursion of the parser itself (nested parentheses add no tree height but do recurse).
  class Nesting {
   public:
    explicit Nesting(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxTreeHeight / 4) parser_.fail("nesting is too deep");
    }
    ~Nesting() { --parser_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& parser_;
  };

  // ---- names -----------------------------------------------------------------------------------------------------
  // SQLite also takes a 'string' where only a name can stand: a table name, or a column after "table.".
  bool at_name(size_t ahead = 0, bool string_allowed = false) const {
    const Token& token = peek(ahead);
    if (token.kind == TokenKind::Word) return !is_reserved_word(token.text);
    return token.kind == TokenKind::QuotedName || token.kind == TokenKind::DoubleQuoted ||
           (string_allowed && token.kind == TokenKind::String);
  }

  Name parse_name(const char* what, bool string_allowed = false) {
    if (!at_name(0, string_allowed)) fail(std::string("expected ") + what);
    const Token& token = advance();
    return Name{token.text, token.kind == TokenKind::Word ? '\0' : sql_[token.start]};
  }

  // An alias after a result column or table: [AS] name. SQLite also accepts a 'string' after AS.
  void parse_alias(Name& alias, bool& with_as) {
    with_as = accept_keyword("AS");
    if (with_as && peek().kind == TokenKind::String) {
      alias = Name{advance().text, '\''};
    } else if (at_name()) {
      alias = parse_name("an alias");
    } else if (with_as) {
      fail("expected an alias after AS");
    }
  }

  // ---- statements -------------------------------------------------------------------------------------------------
  Select parse_select() {
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

  std::string parse_compound_operator() {
    if (accept_keyword("UNION")) return accept_keyword("ALL") ? "UNION ALL" : "UNION";
    if (accept_keyword("INTERSECT")) return "INTERSECT";
    if (accept_keyword("EXCEPT")) return "EXCEPT";
    return "";
  }

  void parse_order_and_limit(std::vector<OrderTerm>& order_by, ExprPtr& limit, ExprPtr& offset) {
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

  static int select_children_height(const Select& select) {
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

  void check_height(int height, size_t offset) const {
    if (height > kMaxTreeHeight) throw SyntaxError(sql_, offset, "expression or subquery nesting is too deep");
  }

  Cte parse_cte() {
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

  SelectCore parse_core() {
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

  ResultColumn parse_result_column() {
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

  ExprPtr make_star(Name schema, Name table, const Token& star) {
    auto expr = std::make_unique<Expr>();
    expr->kind = ExprKind::Star;
    expr->schema = std::move(schema);
    expr->table = std::move(table);
    expr->start = star.start;
    expr->end = star.end;
    return expr;
  }

  OrderTerm parse_order_term() {
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

  // ---- FROM -----------------------------------------------------------------------------------------------------
  std::vector<TableRef> parse_join_list() {
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

  std::string parse_join_operator() {
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

  TableRef parse_table_ref(const std::string& join) {
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

  bool at_indexed() const {
    return (at_keyword("INDEXED") && at_keyword("BY", 1)) || (at_keyword("NOT") && at_keyword("INDEXED", 1));
  }

  // ---- expressions -------------------------------------------------------------------------------------------------
  ExprPtr node(ExprKind kind, size_t start) {
    auto expr = std::make_unique<Expr>();
    expr->kind = kind;
    expr->start = start;
    return expr;
  }

  // Sets the end offset and height once the children are in place.
  ExprPtr finish(ExprPtr expr) {
    expr->end = std::max(expr->end, last_end());
    int height = height_of(expr->select);
    for (const ExprPtr& arg : expr->args) height = std::max(height, height_of(arg));
    expr->height = height + 1;
    check_height(expr->height, expr->start);
    return expr;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right) {
    ExprPtr expr = node(ExprKind::Binary, left->start);
    expr->op = std::move(op);
    expr->args.push_back(std::move(left));
    expr->args.push_back(std::move(right));
    return finish(std::move(expr));
  }

  ExprPtr parse_expr() {
    Nesting nesting(*this);
    ExprPtr left = parse_and();
    while (accept_keyword("OR")) left = binary("OR", std::move(left), parse_and());
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (accept_keyword("AND")) left = binary("AND", std::move(left), parse_not());
    return left;
  }

  ExprPtr parse_not() {
    if (!at_keyword("NOT")) return parse_equality();
    Nesting nesting(*this);
    ExprPtr expr = node(ExprKind::Unary, advance().start);
    expr->op = "NOT";
    expr->args.push_back(parse_not());
    return finish(std::move(expr));
  }

  // The level of =, IS, IN, LIKE, BETWEEN and the NULL tests; all left-associative.
  ExprPtr parse_equality() {
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

  ExprPtr parse_in(ExprPtr value, bool negated) {
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

  // Left-associative binary operators of one precedence level, parsed by `next`.
  template <typename Next>
  ExprPtr parse_level(std::initializer_list<const char*> ops, Next next) {
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

  ExprPtr parse_relational() { return parse_level({"<", "<=", ">", ">="}, &Parser::parse_bitwise); }
  ExprPtr parse_bitwise() { return parse_level({"&", "|", "<<", ">>"}, &Parser::parse_additive); }
  ExprPtr parse_additive() { return parse_level({"+", "-"}, &Parser::parse_multiplicative); }
  ExprPtr parse_multiplicative() { return parse_level({"*", "/", "%"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_level({"||", "->", "->>"}, &Parser::parse_collate); }

  ExprPtr parse_collate() {
    ExprPtr expr = parse_unary();
    while (accept_keyword("COLLATE")) {
      ExprPtr collate = node(ExprKind::Collate, expr->start);
      collate->op = render_name(parse_name("a collation name"));
      collate->args.push_back(std::move(expr));
      expr = finish(std::move(collate));
    }
    return expr;
  }

  ExprPtr parse_unary() {
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

  ExprPtr literal(LiteralKind kind, const Token& token) {
    ExprPtr expr = node(ExprKind::Literal, token.start);
    expr->literal_kind = kind;
    expr->value = token.text;
    expr->literal_index = literal_count_++;
    return finish(std::move(expr));
  }

  ExprPtr parse_primary() {
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

  ExprPtr parse_parenthesised() {
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

  // A function call or a [schema.][table.]column reference.
  ExprPtr parse_name_expression() {
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

  ExprPtr parse_function() {
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

  ExprPtr parse_case() {
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

  ExprPtr parse_cast() {
    ExprPtr expr = node(ExprKind::Cast, advance().start);
    expect_op("(");
    expr->args.push_back(parse_expr());
    expect_keyword("AS");
    expr->op = parse_type_name();
    expect_op(")");
    return finish(std::move(expr));
  }

  // A type name in canonical spelling: its words joined by spaces, then an optional "(size[, size])".
  std::string parse_type_name() {
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

  const std::string& sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int literal_count_ = 0;
};

}  // namespace

Select parse(const std::string& sql) { return Parser(sql, tokenize(sql)).parse_statement(); }

}  // namespace relmem::sql
