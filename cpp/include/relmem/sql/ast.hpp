#pragma once
// Syntax tree of one SQLite SELECT statement (with CTEs and compound parts). Every node remembers its span in the
// source text so that diagnostics can point at it and literals can be rewritten in place.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace relmem::sql {

struct Select;
struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// An identifier, unquoted, with the quote it was written with (0 when bare, or '"', '`', '[').
struct Name {
  std::string text;
  char quote = 0;
  bool empty() const { return text.empty(); }
};

enum class LiteralKind {
  Number,   // text as written; a unary minus directly before a number is folded into it ("-5")
  String,   // unescaped content; quote is '\'' or '"' (a double-quoted value, see TokenKind::DoubleQuoted)
  Blob,     // hex digits
  Null,
  Keyword,  // TRUE, FALSE, CURRENT_DATE, CURRENT_TIME, CURRENT_TIMESTAMP
};

enum class ExprKind {
  Literal,   // literal_kind, value, quote, literal_index
  Column,    // [schema.][table.]column
  Star,      // * or table.*  (in result columns and count(*)-like calls only)
  Unary,     // op in {"-", "+", "~", "NOT"}; args[0]
  Binary,    // op uppercase: OR AND = == != <> < <= > >= IS, IS NOT, + - * / % || -> ->> & | << >>; args[0], args[1]
  Like,      // op in {LIKE, GLOB, REGEXP, MATCH}, negated; args = {value, pattern[, escape]}
  Between,   // negated; args = {value, low, high}
  In,        // negated; args = {value, items...} or args = {value} with select
  IsNull,    // postfix ISNULL / NOTNULL / NOT NULL: negated means NOT NULL; args[0]
  Exists,    // select
  Subquery,  // scalar subquery: select
  Case,      // args = {[operand,] when1, then1, ..., [else]}; has_operand, has_else
  Cast,      // args[0] AS op (the type name as SQL text)
  Function,  // op = name as written; distinct; star_argument for f(*); args
  Collate,   // args[0] COLLATE op (the collation name as SQL text)
};

struct Expr {
  ExprKind kind = ExprKind::Literal;
  size_t start = 0;  // span in the source SQL: [start, end)
  size_t end = 0;
  int height = 1;  // levels in this subtree, nested subqueries included (the parser caps it at kMaxTreeHeight)

  LiteralKind literal_kind = LiteralKind::Null;
  std::string value;
  char quote = 0;
  int literal_index = -1;  // the literal's position among all literals of the statement, in source order

  Name schema, table, column;  // Column and Star

  std::string op;
  bool negated = false;
  bool distinct = false;
  bool star_argument = false;
  bool has_operand = false;
  bool has_else = false;
  std::vector<ExprPtr> args;
  std::unique_ptr<Select> select;
};

struct ResultColumn {
  ExprPtr expr;
  Name alias;
  bool alias_with_as = true;
};

// One FROM item: a named table (base table or CTE), a subquery, or a parenthesised join.
struct TableRef {
  Name schema, name;
  std::unique_ptr<Select> subquery;
  std::vector<TableRef> group;  // items of a parenthesised join; the first has an empty join
  Name alias;
  bool alias_with_as = false;
  // How it joins the item before it: "" for the first, ",", "JOIN", "INNER JOIN", "LEFT JOIN", "LEFT OUTER JOIN",
  // "CROSS JOIN", "NATURAL JOIN", ... (uppercase, single spaces).
  std::string join;
  ExprPtr on;
  std::vector<Name> using_columns;
  size_t start = 0;  // span of the table name, subquery or group (without alias)
  size_t end = 0;
};

struct OrderTerm {
  ExprPtr expr;
  std::string direction;  // "", "ASC" or "DESC"
  std::string nulls;      // "", "NULLS FIRST" or "NULLS LAST"
};

struct SelectCore {
  bool distinct = false;
  bool all = false;
  std::vector<ResultColumn> columns;
  std::vector<TableRef> from;
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  ExprPtr having;
  // ORDER BY / LIMIT written before UNION, INTERSECT or EXCEPT. SQLite rejects them there (a few Spider gold
  // queries have them); they are kept so that such SQL still parses, renders and gets a precise diagnostic.
  std::vector<OrderTerm> misplaced_order_by;
  ExprPtr misplaced_limit;
  ExprPtr misplaced_offset;
  size_t start = 0;
  size_t end = 0;
};

struct Cte {
  Name name;
  std::vector<Name> columns;
  std::string materialized;  // "", "MATERIALIZED" or "NOT MATERIALIZED"
  std::unique_ptr<Select> select;
};

struct Select {
  bool recursive = false;
  std::vector<Cte> ctes;
  std::vector<SelectCore> cores;           // at least one
  std::vector<std::string> compound_ops;   // between cores[i] and cores[i+1]: UNION, UNION ALL, INTERSECT, EXCEPT
  std::vector<OrderTerm> order_by;
  ExprPtr limit;
  ExprPtr offset;
  size_t start = 0;
  size_t end = 0;
  int height = 1;
};

// True for count/sum/avg/min/max/total/group_concat called as aggregates (min and max with one argument).
bool is_aggregate_call(const Expr& expr);
// True when the expression contains an aggregate call outside any subquery.
bool contains_aggregate(const Expr& expr);

// Calls `visit` on every expression node, parents before children, nested subqueries and CTEs included.
using ExprVisitor = std::function<void(const Expr&)>;
void for_each_expr(const Select& select, const ExprVisitor& visit);
void for_each_expr(const Expr& expr, const ExprVisitor& visit);
// Calls `visit` on the statement and on every nested SELECT (CTEs, FROM subqueries, subquery expressions).
using SelectVisitor = std::function<void(const Select&)>;
void for_each_select(const Select& select, const SelectVisitor& visit);
// The literal nodes in source order: element i has literal_index i.
std::vector<const Expr*> literals(const Select& select);

}  // namespace relmem::sql
