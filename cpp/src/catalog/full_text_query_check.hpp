#pragma once
// Private to the catalog: a bound on full-text query strings. FTS3/4 and FTS5 match a phrase against one document
// inside a single virtual machine step, reading every position of each of its tokens, so neither the progress
// handler nor sqlite3_interrupt can stop it: over a document of 1,000,000 equal words, a 128-token phrase runs 6.5 s
// (FTS5) or 9.2 s (FTS4) at a 1 s limit. Bounding the tokens of a query bounds that step to a fixed multiple of the
// document's length.
#include <sqlite3.h>

#include <cstddef>
#include <optional>
#include <string>

namespace relmem {

// Over 1,000,000 equal words at a 1 s limit on the loaded 2-core development machine: FTS5 32 tokens 1.4 s, 64 tokens
// 3.3 s; FTS4 16 tokens 0.7 s, 32 tokens 1.7 s to 2.9 s (docs/hardening.md).
constexpr size_t kMaxFts5QueryTokens = 32;
constexpr size_t kMaxFts4QueryTokens = 16;

// Why the already prepared statement `sql` must not run, or nullopt: every query string and LIKE/GLOB pattern it
// hands to an FTS3, FTS4 or FTS5 table (MATCH, `=` on the table's own column, the table-valued function form, a
// column filter MATCH) must be a string literal of at most kMaxFts5QueryTokens (FTS5) or kMaxFts4QueryTokens
// (FTS3/4) tokens. Tokens are counted as unicode61 splits them, or one per character where the database has a
// trigram tokenizer or a `separators` option. Reads the statement's program (EXPLAIN), and only where the database
// has a full-text table.
std::optional<std::string> refuse_unbounded_full_text_queries(sqlite3* db, const std::string& sql);

}  // namespace relmem
