#pragma once
// Small pieces the selection memory's store, statistics, scorer and parts ranker share.
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "relmem/memories/selection/selection_memory.hpp"

namespace relmem::selection_detail {

// The whole-question terms of a database from the question's cosines with its card and with each of its tables,
// columns and question forms (contiguous): each one's best, and where the database has none, the coarser term
// standing in (the card for tables, the best table for columns, the best column for forms).
void set_whole_question_terms(RawSimilarities& raw, float card, const float* tables, int64_t table_count,
                              const float* columns, int64_t column_count, const float* forms, int64_t form_count);

// Appends the ids first, first + 1, ..., first + count - 1 (a database's tables or columns).
void append_ids(int64_t first, int64_t count, std::vector<int64_t>& out);

bool ranks_before(const DatabaseMatch& a, const DatabaseMatch& b);

// Per match, its score minus the best score among the other matches (0 for a lone match).
std::vector<float> leads_over_others(const std::vector<DatabaseMatch>& matches);

Eigen::RowVectorXf unit_row(const float* row, int dim);

}  // namespace relmem::selection_detail
