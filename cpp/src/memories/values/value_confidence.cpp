#include "relmem/memories/values/value_confidence.hpp"

#include <algorithm>
#include <cmath>

#include "relmem/encoders/fit_for_encoder.hpp"
#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/memories/values/value_lexicon.hpp"

namespace relmem {
namespace {

enum Group : size_t { Meaning, WordNet, Semantic, Abbreviation, Spelling, Groups };
constexpr const char* kGroupNames[Groups] = {"meaning", "wordnet", "semantic", "abbreviation", "spelling"};
constexpr size_t kLogValues = 3 * Groups, kSemanticLogValues = kLogValues + 1, kShort = kLogValues + 2;
static_assert(kShort + 1 == kConfidenceFeatures);
constexpr size_t kShortCodePoints = 4;  // "Paid", "en": a few letters fit many stored values by spelling alone

Group group_of(const std::string& channel) {
  if (channel == "wordnet") return WordNet;
  if (channel == "semantic") return Semantic;
  if (channel == "abbreviation") return Abbreviation;
  if (channel == "lexical" || channel == "normalized" || channel == "case" || channel == "exact") return Spelling;
  return Meaning;  // a concept channel ("country", "gender", ...), a learned alias, a date or number format
}

// The written value names something more specific than the stored one: every word of the stored value is written,
// and more ("West Germany" / 'Germany', "advanced database" / 'database'). Without a meaning channel that says
// they are one thing, a question may well ask for a value the column does not hold.
bool more_specific(const std::string& written, const std::string& stored) {
  std::vector<std::string> a = value_tokens(normalize_value(written)), b = value_tokens(normalize_value(stored));
  if (a.size() <= b.size() || b.empty()) return false;
  for (auto& token : a) token = stem_token(token);
  for (const auto& token : b)
    if (std::find(a.begin(), a.end(), stem_token(token)) == a.end()) return false;
  return true;
}

// The written words the stored value lacks (by stem) are all words or names in their own right, of four letters or
// more, and none extends a stored word or is extended by one ("Iceland" for 'Ireland', "Robin" in "Robin CV" for
// 'Robbin CV'; not "Democrat" for 'Democratic'): then the two differ in spelling because they name other things,
// not because one was misspelled ("Frnace") or derived from the other.
bool known_difference(const std::string& written, const std::string& stored) {
  const ValueLexicon& lexicon = ValueLexicon::shared();
  const std::vector<std::string> stored_tokens = value_tokens(normalize_value(stored));
  std::vector<std::string> stored_stems;
  for (const auto& token : stored_tokens) stored_stems.push_back(stem_token(token));
  const auto extends = [](const std::string& a, const std::string& b) {
    return a.size() < b.size() ? b.compare(0, a.size(), a) == 0 : a.compare(0, b.size(), b) == 0;
  };
  bool any = false;
  for (const auto& token : value_tokens(normalize_value(written))) {
    if (std::find(stored_stems.begin(), stored_stems.end(), stem_token(token)) != stored_stems.end()) continue;
    if (code_points(token).size() < kShortCodePoints || !lexicon.knows(token)) return false;  // "ov", "res"
    if (std::any_of(stored_tokens.begin(), stored_tokens.end(), [&](const auto& s) { return extends(token, s); }))
      return false;
    any = true;
  }
  return any;
}

// The one word the written value has in place of one stored word names a contrasting thing (ValueLexicon::contrasts:
// "Republican" / 'Democratic', "Spanish" / 'French'): WordNet or the encoder relate them, as they relate any two
// members of one class, but a question asking for the one does not mean the other. Not when the two values are one
// WordNet phrase ("Charge card" / 'Credit Card').
bool contrasting_word(const std::string& written, const std::string& stored) {
  const ValueLexicon& lexicon = ValueLexicon::shared();
  const std::string stored_key = ValueLexicon::key_of(stored);
  for (const auto& synonym : lexicon.synonyms_of(ValueLexicon::key_of(written)))
    if (synonym.links == 0 && synonym.key == stored_key) return false;
  std::vector<std::string> a = value_tokens(normalize_value(written)), b = value_tokens(normalize_value(stored));
  const auto only_in = [](const std::vector<std::string>& tokens, const std::vector<std::string>& other) {
    std::vector<std::string> out;
    for (const auto& token : tokens)
      if (std::none_of(other.begin(), other.end(), [&](const auto& o) { return stem_token(o) == stem_token(token); }))
        out.push_back(token);
    return out;
  };
  const auto written_only = only_in(a, b), stored_only = only_in(b, a);
  return written_only.size() == 1 && stored_only.size() == 1 && lexicon.contrasts(written_only[0], stored_only[0]);
}

// The digits of the two, in order, differ ("337" / '338', "Route 9" / 'Route 6'): another number is another thing.
bool other_digits(const std::string& written, const std::string& stored) {
  const auto digits = [](const std::string& text) {
    std::string out;
    for (char c : text)
      if (c >= '0' && c <= '9') out += c;
    return out;
  };
  return digits(written) != digits(stored);
}

// Printed by scripts/fit_value_confidence.py on the tune fold of all cases of scripts/make_value_cases.py
// --per-category 0 --seed 0 (3,693 cases of 75 databases), each on a memory of its encoder. Its 5-fold
// cross-validation by database within that fold chose the L2 penalty and the budget of absent values replaced (the
// setting with the most right outcomes among those that replaced at most 2% of the held-back absent values): for
// USE-lite 0.001 and 1.5%, for MiniLM 0.1 and 2%; see docs/values.md.
struct EncoderConfidence {
  const char* encoder;
  ConfidenceModel model;
};
const EncoderConfidence kFitted[] = {
    {"use-lite",
     {{4.6112, 4.4712, 1.7551, -16.9575, 20.6953, 16.9397, -9.2687, 17.7907, 17.7265, -6.8566, 5.6202, 13.8555,
       -15.4620, 20.0500, 13.1592, -0.1049, -2.4411, 1.6233},
      0.5974}},
    {"minilm",
     {{2.9883, 2.8965, 1.3097, -0.2519, 2.3688, 3.4469, -0.6167, 5.8228, 0.2566, -0.3698, 0.3127, 8.9743, -9.5909,
       13.0681, 7.8358, -0.0886, -2.1479, 0.2985},
      0.7008}},
};

}  // namespace

const ConfidenceModel& ConfidenceModel::fitted(const std::string& encoder) {
  return fit_for_encoder(kFitted, encoder).model;
}

const std::vector<std::string>& confidence_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const char* group : kGroupNames)
      for (const char* suffix : {"", "*score", "*margin"}) out.push_back(std::string(group) + suffix);
    out.insert(out.end(), {"log2_values", "semantic*log2_values", "short"});
    return out;
  }();
  return names;
}

ReplacementEvidence replacement_evidence(const std::string& written, const std::vector<ValueCandidate>& similar,
                                         uint32_t column_values) {
  ReplacementEvidence e;
  if (similar.empty()) return e;
  const ValueCandidate& best = similar[0];
  const double margin = best.score - (similar.size() > 1 ? similar[1].score : 0.0);
  const Group group = group_of(best.channel);
  auto& x = e.features;
  x[3 * group] = 1;
  x[3 * group + 1] = best.score;
  x[3 * group + 2] = margin;
  x[kLogValues] = std::log2(1.0 + column_values);
  x[kSemanticLogValues] = group == Semantic ? x[kLogValues] : 0;
  x[kShort] = std::min(code_points(normalize_value(written)).size(), code_points(normalize_value(best.value)).size()) <=
                      kShortCodePoints
                  ? 1
                  : 0;
  if (group == Meaning) return e;  // a concept, alias or format says they are one thing, whatever the spelling
  if (more_specific(written, best.value))
    e.gate = "more_specific";
  else if (best.channel == "lexical" && known_difference(written, best.value))
    e.gate = "known_words";
  else if ((group == Spelling || group == Abbreviation) && other_digits(written, best.value))
    e.gate = "other_number";
  else if ((group == WordNet || group == Semantic) && contrasting_word(written, best.value))
    e.gate = "contrast";
  return e;
}

double replacement_confidence(const ReplacementEvidence& evidence, const ConfidenceModel& model) {
  if (!evidence.gate.empty()) return 0;
  double z = 0;
  for (size_t i = 0; i < kConfidenceFeatures; ++i) z += model.weights[i] * evidence.features[i];
  return 1.0 / (1.0 + std::exp(-z));
}

}  // namespace relmem
