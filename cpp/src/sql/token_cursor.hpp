#pragma once
// A position in the token list of one statement: look-ahead, keyword and operator matching, syntax errors at the
// current token, and the bound on the parser's own recursion.
#include <algorithm>
#include <string>
#include <vector>

#include "relmem/sql/lexer.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "words.hpp"

namespace relmem::sql {

class TokenCursor {
 public:
  TokenCursor(const std::string& sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {}

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

  // The quote character of a quoted name token; '\0' for a bare word.
  char quote_of(const Token& token) const { return token.kind == TokenKind::Word ? '\0' : sql_[token.start]; }

  [[noreturn]] void fail(const std::string& problem) const { throw SyntaxError(sql_, peek().start, problem); }

  void check_height(int height, size_t offset) const {
    if (height > kMaxTreeHeight) throw SyntaxError(sql_, offset, "expression or subquery nesting is too deep");
  }

  // Bounds the recursion of the parser itself (nested parentheses add no tree height but do recurse).
  class Nesting {
   public:
    explicit Nesting(TokenCursor& cursor) : cursor_(cursor) {
      if (++cursor_.nesting_ > kMaxTreeHeight / 4) cursor_.fail("nesting is too deep");
    }
    ~Nesting() { --cursor_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    TokenCursor& cursor_;
  };

 private:
  const std::string& sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace relmem::sql
