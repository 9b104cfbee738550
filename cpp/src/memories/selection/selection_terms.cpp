#include "selection_terms.hpp"

#include <algorithm>
#include <limits>

namespace relmem::selection_detail {

// The whole-question terms of a database from the question's cosines with its card and with each of its tables,
// columns and question forms (contiguous): each one's best, and where the database has none, the coarser term
// standing in (the card for tables, the best table for columns, the best column for forms).
void set_whole_question_terms(RawSimilarities& raw, float card, const float* tables, int64_t table_count,
                              const float* columns, int64_t column_count, const float* forms, int64_t form_count) {
  auto best = [](float stand_in, const float* scores, int64_t n) {
    return n == 0 ? stand_in : *std::max_element(scores, scores + n);
  };
  raw.card = card;
  raw.table = best(raw.card, tables, table_count);
  raw.column = best(raw.table, columns, column_count);
  raw.question_form = best(raw.column, forms, form_count);
}

// Appends the ids first, first + 1, ..., first + count - 1 (a database's tables or columns).
void append_ids(int64_t first, int64_t count, std::vector<int64_t>& out) {
  for (int64_t i = 0; i < count; ++i) out.push_back(first + i);
}

bool ranks_before(const DatabaseMatch& a, const DatabaseMatch& b) {
  return a.score > b.score || (a.score == b.score && a.database < b.database);
}

std::vector<float> leads_over_others(const std::vector<DatabaseMatch>& matches) {
  float best = -std::numeric_limits<float>::infinity(), second = best;
  for (const auto& match : matches) {
    if (match.score > best) {
      second = best;
      best = match.score;
    } else if (match.score > second) {
      second = match.score;
    }
  }
  std::vector<float> leads;
  leads.reserve(matches.size());
  for (const auto& match : matches) {
    const float other = match.score == best ? second : best;
    leads.push_back(matches.size() < 2 ? 0.0f : match.score - other);
  }
  return leads;
}

Eigen::RowVectorXf unit_row(const float* row, int dim) {
  Eigen::RowVectorXf out = Eigen::Map<const Eigen::RowVectorXf>(row, dim);
  const float norm = out.norm();
  if (norm > 0.0f) out /= norm;
  return out;
}

}  // namespace relmem::selection_detail
