#pragma once
// The recursive-descent parser behind relmem::sql::parse: statements, clauses and FROM items are defined in
// parser.cpp, expressions in expression_parser.cpp.
#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "relmem/sql/ast.hpp"
#include "token_cursor.hpp"

namespace relmem::sql {

inline int height_of(const ExprPtr& expr) { return expr ? expr->height : 0; }
inline int height_of(const std::unique_ptr<Select>& select) { return select ? select->height : 0; }

inline int height_of(const TableRef& ref) {
  int height = std::max(height_of(ref.subquery), height_of(ref.on));
  for (const TableRef& item : ref.group) height = std::max(height, height_of(item));
  return height + 1;
}

class Parser : public TokenCursor {
 public:
  using TokenCursor::TokenCursor;

  Select parse_statement();

 private:
  // ---- names -----------------------------------------------------------------------------------------------------
  // SQLite also takes a 'string' where only a name can stand: a table name, or a column after "table.".
  bool at_name(size_t ahead = 0, bool string_allowed = false) const;

  Name parse_name(const char* what, bool string_allowed = false);

  // An alias after a result column or table: [AS] name. SQLite also accepts a 'string' after AS.
  void parse_alias(Name& alias, bool& with_as);

  // ---- statements and clauses --------------------------------------------------------------------------------------
  Select parse_select();
  std::string parse_compound_operator();
  void parse_order_and_limit(std::vector<OrderTerm>& order_by, ExprPtr& limit, ExprPtr& offset);
  static int select_children_height(const Select& select);
  Cte parse_cte();
  SelectCore parse_core();
  ResultColumn parse_result_column();
  ExprPtr make_star(Name schema, Name table, const Token& star);
  OrderTerm parse_order_term();

  // ---- FROM -----------------------------------------------------------------------------------------------------
  std::vector<TableRef> parse_join_list();
  std::string parse_join_operator();
  TableRef parse_table_ref(const std::string& join);
  bool at_indexed() const;

  // ---- expressions -------------------------------------------------------------------------------------------------
  ExprPtr node(ExprKind kind, size_t start);

  // Sets the end offset and height once the children are in place.
  ExprPtr finish(ExprPtr expr);

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right);
  ExprPtr parse_expr();
  ExprPtr parse_and();
  ExprPtr parse_not();

  // The level of =, IS, IN, LIKE, BETWEEN and the NULL tests; all left-associative.
  ExprPtr parse_equality();

  ExprPtr parse_in(ExprPtr value, bool negated);

  // Left-associative binary operators of one precedence level, parsed by `next`.
  template <typename Next>
  ExprPtr parse_level(std::initializer_list<const char*> ops, Next next);

  ExprPtr parse_relational();
  ExprPtr parse_bitwise();
  ExprPtr parse_additive();
  ExprPtr parse_multiplicative();
  ExprPtr parse_concat();
  ExprPtr parse_collate();
  ExprPtr parse_unary();
  ExprPtr literal(LiteralKind kind, const Token& token);
  ExprPtr parse_primary();
  ExprPtr parse_parenthesised();

  // A function call or a [schema.][table.]column reference.
  ExprPtr parse_name_expression();

  ExprPtr parse_function();
  ExprPtr parse_case();
  ExprPtr parse_cast();

  // A type name in canonical spelling: its words joined by spaces, then an optional "(size[, size])".
  std::string parse_type_name();

  int literal_count_ = 0;
};

}  // namespace relmem::sql
