#pragma once
// LLM-free post-processing of generated SQL: a string literal that its column does not store is replaced by the
// stored value it most likely means, when that match is confident; compared with a foreign key whose referenced
// table stores it as written, the comparison becomes a lookup of the keys instead (key_lookup.hpp). Literals that
// are stored are never touched; weak or ambiguous matches are left alone, since a question may ask for a value that
// is not in the database.
// LIKE/GLOB patterns are only checked (see check_values), never rewritten: a fuzzy match of part of a value is too
// weak a reason to change what a pattern matches.
#include <optional>
#include <string>
#include <vector>

#include "relmem/memories/values/key_lookup.hpp"
#include "relmem/memories/values/value_confidence.hpp"
#include "relmem/memories/values/value_retriever.hpp"

namespace relmem {

struct CorrectionOptions {
  // The best stored value replaces the literal when the calibrated confidence (value_confidence.hpp, the model of
  // the memory's encoder) reaches min_confidence, by default that model's threshold; the score and margin floors
  // hold whatever the model says (a tie is never a reason).
  std::optional<double> min_confidence;
  double min_score = 0.3;
  double min_margin = 0.01;
  int k = 10;  // candidates looked at per literal
};

struct ValueReplacement {
  ValueCondition condition;
  std::string replacement;  // the new literal content
  std::string reason;       // "case" (stored with other letter case) or "similar" (confident fuzzy match)
  std::string channel;      // why it matched (ValueCandidate::channel): "case", "country", "wordnet", "date", ...
  double score = 0;
  double margin = 0;      // over the second best candidate (its score when there is none)
  double confidence = 1;  // replacement_confidence ("case": 1)
};

struct CorrectionResult {
  std::string sql;  // the input with the replaced literals rewritten, every other byte unchanged
  std::vector<ValueReplacement> replacements;
  std::vector<KeyLookup> lookups;  // comparisons rewritten into key lookups
  std::vector<ValueCheck> checks;
};

CorrectionResult correct_values(const std::string& sql, const std::string& db, const Catalog& catalog,
                                const ValueMemory& memory, const CorrectionOptions& options = {});

}  // namespace relmem
