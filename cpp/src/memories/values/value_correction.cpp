#include "relmem/memories/values/value_correction.hpp"

#include <algorithm>
#include <map>

#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/sql/rewrite.hpp"

namespace relmem {
namespace {

// The written value names something more specific than the stored one: every word of the stored value is written,
// and more ("West Germany" / 'Germany', "advanced database" / 'database'). Spelling alone is then no reason to
// replace: a question may well ask for a value the column does not hold.
bool more_specific(const std::string& written, const std::string& stored) {
  std::vector<std::string> a = value_tokens(normalize_value(written)), b = value_tokens(normalize_value(stored));
  if (a.size() <= b.size() || b.empty()) return false;
  for (auto& token : a) token = stem_token(token);
  for (const auto& token : b)
    if (std::find(a.begin(), a.end(), stem_token(token)) == a.end()) return false;
  return true;
}

bool spelling_evidence(const std::string& channel) {
  return channel == "normalized" || channel == "abbreviation" || channel == "lexical" || channel == "semantic" ||
         channel == "wordnet";
}

}  // namespace

CorrectionResult correct_values(const std::string& sql, const std::string& db, const Catalog& catalog,
                                const ValueMemory& memory, const CorrectionOptions& options) {
  CorrectionResult result;
  result.sql = sql;
  result.checks = check_values(sql, db, catalog, memory, std::max(2, options.k));
  const auto values = memory.find_database(db);
  std::map<int, sql::LiteralValue> rewrites;
  for (const auto& check : result.checks) {
    ValueReplacement replacement;
    replacement.condition = check.condition;
    if (check.status == ValueStatus::FoundIgnoringCase && check.case_matches.size() == 1 &&
        !check.condition.pattern()) {
      replacement.replacement = check.case_matches[0];
      replacement.reason = "case";
      replacement.channel = "case";
      replacement.score = 1.0;
      replacement.margin = 1.0;
    } else if (check.status == ValueStatus::NotFound && !check.similar.empty() && !check.condition.pattern()) {
      const ValueCandidate& best = check.similar[0];
      replacement.score = best.score;
      replacement.margin = check.similar.size() > 1 ? best.score - check.similar[1].score : 1.0;
      if (replacement.score < options.min_score || replacement.margin < options.min_margin) continue;
      if (spelling_evidence(best.channel) && more_specific(check.condition.value, best.value)) continue;
      replacement.replacement = best.value;
      replacement.reason = "similar";
      replacement.channel = best.channel;
    } else {
      continue;
    }
    const ColumnValues* column = values ? values->find_column(check.condition.table, check.condition.column) : nullptr;
    const bool number = column && column->kind == ColumnKind::Numeric && replacement.channel == "number";
    rewrites.emplace(check.condition.literal_index, number ? sql::LiteralValue::number(replacement.replacement)
                                                           : sql::LiteralValue::string(replacement.replacement));
    result.replacements.push_back(std::move(replacement));
  }
  if (!rewrites.empty()) result.sql = sql::rewrite_literals(sql, rewrites);
  return result;
}

}  // namespace relmem
