// Sparse rows of the lexical channel: dot products (every row length, including the unrolled loop's remainders) and
// norms equal the dense ones, document frequencies follow adds and removes, and files round-trip.
#include <gtest/gtest.h>

#include <random>

#include "relmem/common.hpp"
#include "relmem/memories/text/sparse_vectors.hpp"
#include "test_util.hpp"

using namespace relmem;

TEST(SparseVectors, DotProductsAndNormsEqualDenseOnes) {
  const int dim = 64;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> query(dim), weights(dim);
  for (auto& v : query) v = normal(rng);
  for (auto& v : weights) v = std::abs(normal(rng));
  SparseVectors vectors(dim);
  std::vector<std::vector<float>> dense;
  for (int nnz = 0; nnz <= 11; ++nnz) {
    std::vector<float> row(dim, 0.0f);
    for (int j = 0; j < nnz; ++j) row[static_cast<size_t>((j * 7 + nnz) % dim)] = normal(rng);
    vectors.add(nnz, row.data());
    dense.push_back(row);
  }
  for (int id = 0; id <= 11; ++id) {
    double want = 0.0, norm = 0.0;
    for (int j = 0; j < dim; ++j) {
      want += double(dense[id][j]) * query[j];
      norm += double(dense[id][j] * weights[j]) * (dense[id][j] * weights[j]);
    }
    EXPECT_NEAR(vectors.dot(id, query.data()), want, 1e-5) << "nnz " << id;
    EXPECT_NEAR(vectors.weighted_norm(id, weights), std::sqrt(norm), 1e-5);
    double covered = 0.0;  // the query's entries where the row has a value, whatever the value
    for (int j = 0; j < dim; ++j) covered += dense[id][j] != 0.0f ? query[j] : 0.0f;
    EXPECT_NEAR(vectors.covered(id, query.data()), covered, 1e-5);
  }
  EXPECT_THROW(vectors.dot(99, query.data()), Error);
  EXPECT_THROW(vectors.covered(99, query.data()), Error);
}

TEST(SparseVectors, FrequenciesFollowChangesAndFilesRoundTrip) {
  SparseVectors vectors(4);
  const float a[4] = {1, 0, 2, 0}, b[4] = {0, 0, 3, 4};
  vectors.add(1, a);
  vectors.add(2, b);
  EXPECT_EQ(vectors.document_frequency(), (std::vector<int64_t>{1, 0, 2, 1}));
  vectors.add(2, a);  // replaced
  EXPECT_EQ(vectors.document_frequency(), (std::vector<int64_t>{2, 0, 2, 0}));
  EXPECT_TRUE(vectors.remove(1));
  EXPECT_EQ(vectors.document_frequency(), (std::vector<int64_t>{1, 0, 1, 0}));
  relmem_test::TempDir dir;
  vectors.save(dir.file("v.sparse"));
  const SparseVectors loaded = SparseVectors::load(dir.file("v.sparse"));
  EXPECT_EQ(loaded.ids(), std::vector<int64_t>{2});
  const float q[4] = {1, 1, 1, 1};
  EXPECT_FLOAT_EQ(loaded.dot(2, q), 3.0f);
  relmem_test::write_bytes(dir.file("bad.sparse"), "RMSV garbage");
  EXPECT_THROW(SparseVectors::load(dir.file("bad.sparse")), Error);
}

// The file layout is fixed: files written by earlier versions must keep loading.
TEST(SparseVectors, FileBytesFollowTheDocumentedLayout) {
  SparseVectors vectors(4);
  const float seven[4] = {0, 1.5f, 0, -2}, three[4] = {0.25f, 0, 0, 0};
  vectors.add(7, seven);
  vectors.add(3, three);
  std::string expected = "RMSV";
  auto append = [&](const auto& value) { expected.append(reinterpret_cast<const char*>(&value), sizeof value); };
  append(uint32_t{1});  // version
  append(uint32_t{4});  // dim
  append(uint64_t{2});  // rows, by id
  append(int64_t{3}), append(uint32_t{1}), append(uint32_t{0}), append(0.25f);
  append(int64_t{7}), append(uint32_t{2}), append(uint32_t{1}), append(1.5f), append(uint32_t{3}), append(-2.0f);
  append(uint64_t{0xb878c868c669018cULL});  // FNV-1a of the bytes before it
  relmem_test::TempDir dir;
  vectors.save(dir.file("v.sparse"));
  EXPECT_EQ(relmem_test::read_bytes(dir.file("v.sparse")), expected);
  relmem_test::write_bytes(dir.file("v.sparse"), expected);
  EXPECT_EQ(SparseVectors::load(dir.file("v.sparse")).ids(), (std::vector<int64_t>{3, 7}));
}
