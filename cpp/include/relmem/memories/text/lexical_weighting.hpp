#pragma once
// IDF weighting of the lexical (hashing) channel: a feature found in many of the collection's cards counts less.
// The lexical cosine of question q and document d is cos(q ∘ idf, d ∘ idf), with idf_j = log((N + 1) / (df_j + 1))
// over the N stored lexical vectors (database and table cards).
#include <cstdint>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

std::vector<float> inverse_document_frequencies(const std::vector<int64_t>& document_frequency, int64_t documents);

// Columns of `rows` with a non-zero, per dimension.
std::vector<int64_t> document_frequencies(const RowMatrix& rows);

// Rows multiplied by the weights and L2-normalized (zero rows stay zero).
RowMatrix weigh_rows(const RowMatrix& rows, const std::vector<float>& weights);

}  // namespace relmem
