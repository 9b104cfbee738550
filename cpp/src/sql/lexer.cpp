#include "relmem/sql/lexer.hpp"

#include <cstring>
#include <string_view>

#include "relmem/sql/syntax_error.hpp"

namespace relmem::sql {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
// Bytes of multi-byte UTF-8 sequences count as identifier characters, as in SQLite.
bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_word_char(char c) { return is_word_start(c) || is_digit(c) || c == '$'; }

class Lexer {
 public:
  explicit Lexer(const std::string& sql) : sql_(sql) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= sql_.size()) break;
      tokens.push_back(next());
    }
    tokens.push_back(Token{TokenKind::End, "", sql_.size(), sql_.size()});
    return tokens;
  }

 private:
  char peek(size_t ahead = 0) const { return pos_ + ahead < sql_.size() ? sql_[pos_ + ahead] : '\0'; }

  void skip_space_and_comments() {
    while (pos_ < sql_.size()) {
      char c = sql_[pos_];
      if (std::strchr(" \t\n\r\f\v", c) != nullptr) {
        ++pos_;
      } else if (c == '-' && peek(1) == '-') {
        while (pos_ < sql_.size() && sql_[pos_] != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        size_t close = sql_.find("*/", pos_ + 2);
        pos_ = close == std::string::npos ? sql_.size() : close + 2;  // SQLite accepts an unterminated comment
      } else {
        return;
      }
    }
  }

  Token next() {
    size_t start = pos_;
    char c = sql_[pos_];
    if ((c == 'x' || c == 'X') && peek(1) == '\'') return blob(start);
    if (is_word_start(c)) {
      while (pos_ < sql_.size() && is_word_char(sql_[pos_])) ++pos_;
      return make(TokenKind::Word, sql_.substr(start, pos_ - start), start);
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number(start);
    switch (c) {
      case '\'': return quoted(start, '\'', TokenKind::String);
      case '"': return quoted(start, '"', TokenKind::DoubleQuoted);
      case '`': return quoted(start, '`', TokenKind::QuotedName);
      case '[': return bracketed(start);
      case '?': case ':': case '@': case '$':
        throw SyntaxError(sql_, start, "bind parameters are not supported");
      default: return operator_token(start);
    }
  }

  Token make(TokenKind kind, std::string text, size_t start) const {
    return Token{kind, std::move(text), start, pos_};
  }

  // A quote character inside is written twice; the token text is the unescaped content.
  Token quoted(size_t start, char quote, TokenKind kind) {
    std::string text;
    ++pos_;
    while (true) {
      if (pos_ >= sql_.size()) throw SyntaxError(sql_, start, std::string("unterminated ") + quote + "-quoted text");
      char c = sql_[pos_++];
      if (c == quote) {
        if (peek() != quote) break;
        ++pos_;
      }
      text += c;
    }
    return make(kind, std::move(text), start);
  }

  Token bracketed(size_t start) {
    size_t close = sql_.find(']', pos_ + 1);
    if (close == std::string::npos) throw SyntaxError(sql_, start, "unterminated [name]");
    std::string text = sql_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    return make(TokenKind::QuotedName, std::move(text), start);
  }

  Token blob(size_t start) {
    pos_ += 2;
    size_t digits_start = pos_;
    while (pos_ < sql_.size() && is_hex_digit(sql_[pos_])) ++pos_;
    if (peek() != '\'' || (pos_ - digits_start) % 2 != 0) {
      throw SyntaxError(sql_, start, "malformed blob literal: X'...' needs an even number of hex digits");
    }
    std::string digits = sql_.substr(digits_start, pos_ - digits_start);
    ++pos_;
    return make(TokenKind::Blob, std::move(digits), start);
  }

  Token number(size_t start) {
    if (sql_[pos_] == '0' && (peek(1) == 'x' || peek(1) == 'X') && is_hex_digit(peek(2))) {
      pos_ += 2;
      while (pos_ < sql_.size() && is_hex_digit(sql_[pos_])) ++pos_;
    } else {
      while (is_digit(peek())) ++pos_;
      if (peek() == '.') {
        ++pos_;
        while (is_digit(peek())) ++pos_;
      }
      if ((peek() == 'e' || peek() == 'E') &&
          (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
        pos_ += 2;
        while (is_digit(peek())) ++pos_;
      }
    }
    if (is_word_char(peek()) || peek() == '.') throw SyntaxError(sql_, start, "malformed number");
    return make(TokenKind::Number, sql_.substr(start, pos_ - start), start);
  }

  Token operator_token(size_t start) {
    static constexpr std::string_view kOperators[] = {"->>", "||", "->", "==", "!=", "<>", "<=", ">=", "<<", ">>",
                                                      "(",   ")",  ",",  ".",  ";",  "+",  "-",  "*",  "/",  "%",
                                                      "=",   "<",  ">",  "&",  "|",  "~"};
    const std::string_view rest = std::string_view(sql_).substr(pos_);
    for (std::string_view op : kOperators) {
      if (op[0] == rest[0] && rest.substr(0, op.size()) == op) {
        pos_ += op.size();
        return make(TokenKind::Operator, std::string(op), start);
      }
    }
    throw SyntaxError(sql_, start, "unexpected character");
  }

  const std::string& sql_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<Token> tokenize(const std::string& sql) { return Lexer(sql).run(); }

}  // namespace relmem::sql
