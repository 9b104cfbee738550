#pragma once
// Private to the catalog: what kind of statement an SQL text holds, for the executor's refusal messages.
#include <cstddef>
#include <string>

namespace relmem {

// The offset of the first character at or after `i` that is neither whitespace nor inside an SQL comment.
size_t skip_space_and_comments(const std::string& sql, size_t i);

// The upper-case keyword of the statement `sql` starts with, looking past a WITH clause's common table expressions
// to the statement they serve: "SELECT" for "WITH a AS (SELECT 1) SELECT * FROM a", "DELETE" for "WITH a AS
// (SELECT 1) DELETE FROM t". "" when the text holds no word first, or a WITH clause is cut short.
std::string statement_keyword(const std::string& sql);

// Whether `keyword` starts an SQLite statement other than SELECT (DELETE, PRAGMA, ATTACH, ...).
bool is_other_statement_keyword(const std::string& keyword);

}  // namespace relmem
