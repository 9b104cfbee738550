#pragma once
// How sure post-processing is that the best stored candidate for a literal its column does not hold is what the
// literal means. A score alone cannot say: a lexical 0.85 is a typo of one name and the wrong neighbour of another,
// an encoder cosine of 0.55 is a synonym in a column of three status codes and noise in a column of 200 names. So
// the confidence is a logistic model over the evidence of the match: which kind of channel gave it (meaning,
// WordNet, encoder, abbreviation, spelling), its score and its margin over the runner-up, the column's number of
// distinct values, and whether the literal is short.
//
// Four gates come first, for matches that spelling, WordNet or the encoder alone cannot make, whatever their score:
// "more_specific" (every stored word written, and more: "West Germany" / 'Germany'), "known_words" (the written
// words a lexical match changes are words or names in their own right, four letters or more: "Iceland" /
// 'Ireland', "Robin CV" / 'Robbin CV', not the typo "Frnace"), "other_number" (the digits differ: "337" /
// '338') and "contrast" (a WordNet or encoder match whose one changed word names a contrasting thing, an antonym or a
// sibling under one broader sense: "Republican" / 'Democratic', "Spanish" / 'French'). A meaning channel (a concept, a
// learned alias, a date or number format) passes them.
//
// The weights, the L2 penalty and the threshold's budget of absent values are fit by scripts/fit_value_confidence.py
// on the "tune" fold of scripts/make_value_cases.py (half of the Spider databases, chosen by a seeded hash), the
// settings by cross-validation inside it; the other half ("heldout") is not read while fitting. The encoder channel's
// cosines differ by encoder, so each encoder with a fit has its own model.
#include <array>
#include <string>
#include <vector>

#include "relmem/memories/values/value_memory.hpp"

namespace relmem {

constexpr size_t kConfidenceFeatures = 18;

struct ConfidenceModel {
  std::array<double, kConfidenceFeatures> weights{};
  double threshold = 0.5;  // replace when the confidence reaches it
  // The model scripts/fit_value_confidence.py fit on a memory of `encoder` ("use-lite", "minilm"; a fine-tuned
  // "minilm:DIR" gets MiniLM's; see docs/values.md); an encoder without a fit of its own gets USE-lite's.
  static const ConfidenceModel& fitted(const std::string& encoder = "use-lite");
};

// Names of the features, in order ("meaning", "meaning*score", "meaning*margin", ..., "log2_values", ...).
const std::vector<std::string>& confidence_feature_names();

struct ReplacementEvidence {
  std::array<double, kConfidenceFeatures> features{};
  std::string gate;  // the gate that stops the replacement ("more_specific", ...); empty when none does
};

// The evidence for replacing `written` by similar[0]; `similar` is the lookup's best-first candidates,
// `column_values` the column's number of distinct indexed values.
ReplacementEvidence replacement_evidence(const std::string& written, const std::vector<ValueCandidate>& similar,
                                         uint32_t column_values);

// The probability that similar[0] is what `written` means: 0 behind a gate, else the logistic model's.
double replacement_confidence(const ReplacementEvidence& evidence,
                              const ConfidenceModel& model = ConfidenceModel::fitted());

}  // namespace relmem
