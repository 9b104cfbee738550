#pragma once
// Private to the catalog: a bound on FTS5 query strings. FTS5 matches a phrase against one document inside a single
// virtual machine step, reading every position of each of its tokens, so neither the progress handler nor
// sqlite3_interrupt can stop it: a phrase of 256 tokens over a document of 1,000,000 equal words takes 7 s, one of
// 1,000 tokens 33 s. Bounding the tokens of a query bounds that step to a fixed multiple of the document's length.
#include <sqlite3.h>

#include <cstddef>
#include <optional>
#include <string>

namespace relmem {

// A phrase of 32 tokens over a document of 1,000,000 equal words: 0.6 s on the 2-core development machine; 64: 1.7 s
// to 2 s (docs/hardening.md).
constexpr size_t kMaxFts5QueryTokens = 32;

// Why the already prepared statement `sql` must not run, or nullopt: every FTS5 query string and LIKE/GLOB pattern
// it hands to an FTS5 table (MATCH, `=` on the table's own column, the table-valued function form, a column filter
// MATCH) must be a string literal of at most kMaxFts5QueryTokens tokens. Tokens are counted as unicode61 splits them,
// or one per character where the database has a trigram tokenizer or a `separators` option. Reads the statement's
// program (EXPLAIN), and only where the database has an FTS5 table.
std::optional<std::string> refuse_unbounded_fts5_queries(sqlite3* db, const std::string& sql);

}  // namespace relmem
