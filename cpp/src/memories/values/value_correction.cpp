#include "relmem/memories/values/value_correction.hpp"

#include <algorithm>
#include <map>

#include "relmem/sql/rewrite.hpp"

namespace relmem {

CorrectionResult correct_values(const std::string& sql, const std::string& db, const Catalog& catalog,
                                const ValueMemory& memory, const CorrectionOptions& options) {
  CorrectionResult result;
  result.sql = sql;
  result.checks = check_values(sql, db, catalog, memory, std::max(2, options.k));
  const auto values = memory.find_database(db);
  const ConfidenceModel& model = ConfidenceModel::fitted(memory.encoder().name());
  const double min_confidence = options.min_confidence.value_or(model.threshold);
  std::map<int, sql::LiteralValue> rewrites;
  std::vector<KeyLookup> lookups;
  for (const auto& check : result.checks) {
    if (check.status == ValueStatus::NotFound && !check.condition.pattern()) {
      if (auto lookup = find_key_lookup(check.condition, db, catalog)) {
        lookups.push_back(std::move(*lookup));
        continue;
      }
    }
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
      const ColumnValues* column = memory.column(db, check.condition.table, check.condition.column);
      replacement.score = best.score;
      replacement.margin = best.score - (check.similar.size() > 1 ? check.similar[1].score : 0.0);
      replacement.confidence = replacement_confidence(
          replacement_evidence(check.condition.value, check.similar, column ? column->count : 0), model);
      if (replacement.score < options.min_score || replacement.margin < options.min_margin ||
          replacement.confidence < min_confidence)
        continue;
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
  if (!lookups.empty()) {
    KeyLookupRewrite rewritten = apply_key_lookups(result.sql, catalog.schema(db), lookups);
    result.sql = std::move(rewritten.sql);
    result.lookups = std::move(rewritten.applied);
  }
  return result;
}

}  // namespace relmem
