#include "relmem/memories/values/value_scoring.hpp"

#include <algorithm>
#include <cstdlib>

#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

std::string ascii_lower(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

PreparedValue prepare_value(const std::string& text, const std::string& normalized, std::vector<uint32_t> trigrams) {
  PreparedValue p;
  p.text = text;
  p.normalized = normalized;
  p.lowered = ascii_lower(text);
  p.tokens = value_tokens(normalized);
  p.compact = compact_value(normalized);
  p.key = content_key(p.tokens);
  p.code_points = code_points(normalized);
  p.trigrams = std::move(trigrams);
  return p;
}

PreparedValue prepare_value(const std::string& text) {
  const std::string normalized = normalize_value(text);
  return prepare_value(text, normalized, trigram_set(normalized));
}

MatchComponents compare_values(const PreparedValue& query, const PreparedValue& stored) {
  MatchComponents c;
  c.exact = query.text == stored.text ? 1 : 0;
  c.case_only = query.lowered == stored.lowered ? 1 : 0;
  c.normalized = !query.compact.empty() && (query.compact == stored.compact || query.key == stored.key) ? 1 : 0;
  c.trigram = trigram_dice(query.trigrams, stored.trigrams);
  const size_t a = query.code_points.size(), b = stored.code_points.size();
  const size_t longer = std::max(a, b), difference = a > b ? a - b : b - a;
  if (longer > 0 && 2 * difference <= longer) c.edit = edit_similarity(query.code_points, stored.code_points);
  c.token = token_similarity(query.tokens, stored.tokens);
  c.abbreviation = abbreviation_score(query.tokens, stored.tokens);
  return c;
}

double fuse(const MatchComponents& c, const FusionWeights& w) {
  if (c.exact > 0) return 1.0;
  if (c.case_only > 0) return w.case_only;
  if (c.normalized > 0) return w.normalized;
  double score = std::max({c.trigram, c.edit, c.token, w.abbreviation * c.abbreviation});
  if (c.semantic >= 0) score = std::max(score, w.semantic * c.semantic);
  return std::min(w.normalized - 0.01, score);
}

std::string evidence_name(const MatchComponents& c, const FusionWeights& w) {
  if (c.exact > 0) return "exact";
  if (c.case_only > 0) return "case";
  if (c.normalized > 0) return "normalized";
  const double lexical = std::max({c.trigram, c.edit, c.token});
  const double abbreviation = w.abbreviation * c.abbreviation;
  const double semantic = c.semantic >= 0 ? w.semantic * c.semantic : -1;
  if (semantic > lexical && semantic > abbreviation) return "semantic";
  return abbreviation > lexical ? "abbreviation" : "lexical";
}

}  // namespace relmem
