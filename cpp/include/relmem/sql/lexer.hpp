#pragma once
// Splits SQLite SQL text into tokens that remember their byte offsets in the original text.
#include <cstddef>
#include <string>
#include <vector>

namespace relmem::sql {

enum class TokenKind {
  Word,          // bare identifier or keyword; keywords are recognised by the parser, case-insensitively
  QuotedName,    // `name` or [name]: always an identifier
  DoubleQuoted,  // "text": an identifier, or a string value when no column has that name (SQLite's rule)
  String,        // 'text'
  Number,
  Blob,          // X'0A1B'
  Operator,      // ( ) , . ; + - * / % || -> ->> = == != <> < <= > >= & | << >> ~
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // Word, Number, Operator: as written; quoted kinds: the content, unescaped; Blob: the hex digits
  size_t start = 0;  // byte offsets into the SQL text: [start, end)
  size_t end = 0;
};

// Comments and whitespace are dropped; the last token is always End. Throws SyntaxError on text SQLite rejects
// (unterminated strings, stray characters, malformed numbers) and on bind parameters, which relmem never uses.
std::vector<Token> tokenize(const std::string& sql);

}  // namespace relmem::sql
