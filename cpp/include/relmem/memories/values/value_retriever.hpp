#pragma once
// Tool-SQL's database retriever without an LLM: checks each string literal a SQL query compares with a column
// against the database, and for the ones not stored there finds the most similar stored values, as feedback text.
#include <string>
#include <vector>

#include "relmem/catalog/catalog.hpp"
#include "relmem/memories/values/value_conditions.hpp"
#include "relmem/memories/values/value_memory.hpp"

namespace relmem {

enum class ValueStatus {
  Found,              // stored exactly as written (LIKE/GLOB: some stored value matches the pattern)
  FoundIgnoringCase,  // stored, with other letter case
  NotFound,           // not stored in that column
};
std::string value_status_name(ValueStatus status);

struct ValueCheck {
  ValueCondition condition;
  ValueStatus status = ValueStatus::Found;
  std::vector<std::string> case_matches;  // FoundIgnoringCase: the stored spellings, most frequent first
  // NotFound: the most similar stored values, best first (none when the memory indexes no text for the column).
  std::vector<ValueCandidate> similar;
};

// One check per string condition of `sql` (see value_conditions). Existence is tested on the memory when it holds
// every value of a text-only column and the database file is unchanged since it was indexed, else on the database
// itself with read-only queries (so values beyond the per-column cap count as found). Throws
// relmem::sql::SyntaxError for SQL that does not parse and relmem::Error for an unknown database.
std::vector<ValueCheck> check_values(const std::string& sql, const std::string& db, const Catalog& catalog,
                                     const ValueMemory& memory, int k = 5);

// Feedback for an LLM, one line per literal that is not stored as written; empty when all are.
// "Value 'Los Angeles' not found in restaurant.city; similar stored values: 'LA', 'SF'."
std::string value_feedback(const std::vector<ValueCheck>& checks);

}  // namespace relmem
