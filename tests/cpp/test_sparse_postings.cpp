// Sparse rows turned around: for every slot, a sparse query (including a dimension every row holds and one none
// holds) gives the dot product, weighted norm and covered mass that a pass over the row gives, for rows of two sets
// (as the selection memory's cards and tables), read or mapped, empty rows included.
#include <gtest/gtest.h>

#include <random>

#include "relmem/common.hpp"
#include "relmem/memories/text/sparse_postings.hpp"
#include "relmem/memories/text/sparse_vectors.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

SparseVectors random_rows(int dim, int64_t rows, int64_t first_id, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::bernoulli_distribution kept(0.2);
  SparseVectors vectors(dim);
  std::vector<float> row(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    for (int j = 0; j < dim; ++j) row[static_cast<size_t>(j)] = j == 0 || (r > 0 && kept(rng)) ? uniform(rng) : 0.0f;
    if (r == 1) std::fill(row.begin(), row.end(), 0.0f);  // an empty row
    vectors.add(first_id + r, row.data());
  }
  return vectors;
}

void expect_same_passes(const SparsePostings& postings,
                        const std::vector<std::pair<const SparseVectors*, int64_t>>& rows, const float* query,
                        const float* weights, const float* mass) {
  const std::vector<SparseVectors::RowPass> passes = postings.passes(query, mass);
  ASSERT_EQ(passes.size(), rows.size());
  for (size_t slot = 0; slot < rows.size(); ++slot) {
    const auto& [vectors, id] = rows[slot];
    const SparseVectors::RowPass want = vectors->pass(id, query, weights, mass);
    EXPECT_NEAR(passes[slot].dot, want.dot, 1e-5f) << "slot " << slot;
    EXPECT_NEAR(passes[slot].weighted_norm, want.weighted_norm, 1e-5f) << "slot " << slot;
    EXPECT_NEAR(passes[slot].covered, want.covered, 1e-5f) << "slot " << slot;
  }
}

}  // namespace

TEST(SparsePostings, EverySlotGetsWhatAPassOverItsRowGives) {
  const int dim = 300;
  std::mt19937 rng(3);
  const SparseVectors cards = random_rows(dim, 40, 0, rng), tables = random_rows(dim, 600, 1000, rng);
  std::vector<std::pair<const SparseVectors*, int64_t>> rows;
  for (int64_t card = 0; card < 40; ++card) {  // each card, then two or three of the tables, as a memory lays them
    rows.emplace_back(&cards, card);
    for (int64_t t = 0; t < 2 + card % 2; ++t) rows.emplace_back(&tables, 1000 + 15 * card + t);
  }
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> weights(dim), query(dim, 0.0f), mass(dim, 0.0f);
  for (auto& w : weights) w = uniform(rng);
  weights[7] = 0.0f;
  for (int j : {0, 3, 7, 50, 51, 123, 299}) query[static_cast<size_t>(j)] = uniform(rng) - 0.5f;
  for (int j : {0, 3, 7, 50, 51, 123, 299}) mass[static_cast<size_t>(j)] = uniform(rng);
  query[7] = 0.0f;  // a dimension with mass but no query value: its coverage still counts
  const SparsePostings postings(dim, rows, weights);
  EXPECT_EQ(postings.slots(), static_cast<int64_t>(rows.size()));
  EXPECT_GT(postings.memory_bytes(), 0u);
  expect_same_passes(postings, rows, query.data(), weights.data(), mass.data());

  relmem_test::TempDir dir;  // the same rows read through a mapped file (600 rows of about 60 entries)
  tables.save(dir.file("tables.sparse"));
  const SparseVectors mapped = SparseVectors::load(dir.file("tables.sparse"), /*mmap=*/true);
  ASSERT_TRUE(mapped.mapped());
  auto mapped_rows = rows;
  for (auto& row : mapped_rows)
    if (row.first == &tables) row.first = &mapped;
  expect_same_passes(SparsePostings(dim, mapped_rows, weights), mapped_rows, query.data(), weights.data(),
                     mass.data());
}

TEST(SparsePostings, RefusesMismatchedShapes) {
  SparseVectors rows(8);
  const float row[8] = {1, 0, 0, 2, 0, 0, 0, 0};
  rows.add(5, row);
  EXPECT_THROW(SparsePostings(8, {{&rows, 5}}, std::vector<float>(7, 1.0f)), Error);
  EXPECT_THROW(SparsePostings(9, {{&rows, 5}}, std::vector<float>(9, 1.0f)), Error);
  EXPECT_THROW(SparsePostings(8, {{&rows, 6}}, std::vector<float>(8, 1.0f)), Error);  // unknown id
}
