#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <thread>

#include "relmem/index/vector_index.hpp"
#include "test_random_rows.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::random_matrix;

namespace {

// Plain reference: score every pair, sort each row.
std::vector<std::vector<int64_t>> brute_force(const RowMatrix& data, const RowMatrix& queries, int k, bool cosine) {
  RowMatrix d = data, q = queries;
  if (cosine) {
    d.rowwise().normalize();
    q.rowwise().normalize();
  }
  std::vector<std::vector<int64_t>> out;
  for (int i = 0; i < q.rows(); ++i) {
    std::vector<std::pair<float, int64_t>> scored;
    for (int j = 0; j < d.rows(); ++j) scored.push_back({-q.row(i).dot(d.row(j)), j});
    std::sort(scored.begin(), scored.end());
    std::vector<int64_t> ids;
    for (int j = 0; j < k && j < static_cast<int>(scored.size()); ++j) ids.push_back(scored[j].second);
    out.push_back(ids);
  }
  return out;
}

}  // namespace

class VectorIndexTopK : public ::testing::TestWithParam<std::tuple<Metric, int, int>> {};

TEST_P(VectorIndexTopK, EqualsBruteForce) {
  const auto [metric, n, k] = GetParam();
  const RowMatrix data = random_matrix(n, 48, 1);
  const RowMatrix queries = random_matrix(37, 48, 2);
  VectorIndex index(48, metric);
  index.add(data.data(), n);
  SearchResult result = index.search(queries.data(), queries.rows(), k);
  const auto expected = brute_force(data, queries, k, metric == Metric::Cosine);
  for (int i = 0; i < queries.rows(); ++i) {
    for (int j = 0; j < k; ++j) {
      if (j < n) {
        EXPECT_EQ(result.ids(i, j), expected[i][j]) << "query " << i << " rank " << j;
        if (j > 0) EXPECT_GE(result.scores(i, j - 1), result.scores(i, j));
      } else {
        EXPECT_EQ(result.ids(i, j), -1);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, VectorIndexTopK,
                         ::testing::Values(std::make_tuple(Metric::Cosine, 5000, 10),
                                           std::make_tuple(Metric::InnerProduct, 5000, 1),
                                           std::make_tuple(Metric::Cosine, 70000, 25),  // several GEMM blocks
                                           std::make_tuple(Metric::InnerProduct, 3, 8)));  // k > n pads

// Fewer than 16 queries go through Eigen's product, more through the packed kernel; ranges gather their rows.
TEST(VectorIndex, FewAndManyQueriesAndRangesEqualBruteForce) {
  const RowMatrix data = random_matrix(3000, 40, 11);
  VectorIndex index(40, Metric::InnerProduct);
  index.add(data.data(), data.rows());
  for (int n_queries : {3, 15, 16, 40}) {
    const RowMatrix queries = random_matrix(n_queries, 40, 12 + n_queries);
    const auto expected = brute_force(data, queries, 7, false);
    const SearchResult all = index.search(queries.data(), n_queries, 7);
    const RowMatrix tail = data.bottomRows(1000);
    const auto expected_tail = brute_force(tail, queries, 7, false);
    const SearchResult ranged = index.search_range(queries.data(), n_queries, 7, 2000, 3000);
    for (int i = 0; i < n_queries; ++i)
      for (int j = 0; j < 7; ++j) {
        EXPECT_EQ(all.ids(i, j), expected[i][j]) << n_queries << " queries, query " << i << " rank " << j;
        EXPECT_EQ(ranged.ids(i, j), 2000 + expected_tail[i][j]) << n_queries << " queries, query " << i;
      }
  }
}

TEST(VectorIndex, CustomIdsRemoveAndRange) {
  const RowMatrix data = random_matrix(100, 16, 3);
  std::vector<int64_t> ids(100);
  std::iota(ids.begin(), ids.end(), 1000);
  VectorIndex index(16);
  index.add(data.data(), 100, ids.data());
  EXPECT_EQ(index.size(), 100);
  EXPECT_THROW(index.add(data.data(), 1, ids.data()), Error);  // duplicate id

  SearchResult self = index.search(data.data() + 16 * 42, 1, 1);
  EXPECT_EQ(self.ids(0, 0), 1042);
  EXPECT_NEAR(self.scores(0, 0), 1.0f, 1e-5);

  EXPECT_EQ(index.remove({1042, 5}), 1);
  EXPECT_FALSE(index.contains(1042));
  EXPECT_NE(index.search(data.data() + 16 * 42, 1, 1).ids(0, 0), 1042);

  SearchResult ranged = index.search_range(data.data(), 1, 100, 1010, 1020);
  for (int j = 0; j < 10; ++j) {
    EXPECT_GE(ranged.ids(0, j), 1010);
    EXPECT_LT(ranged.ids(0, j), 1020);
  }
  EXPECT_EQ(ranged.ids(0, 10), -1);

  index.add(data.data(), 1);  // automatic ids continue after the largest
  EXPECT_TRUE(index.contains(1100));
}

TEST(VectorIndex, SaveLoadRoundTrip) {
  relmem_test::TempDir dir;
  const RowMatrix data = random_matrix(500, 32, 4);
  VectorIndex index(32, Metric::InnerProduct);
  index.add(data.data(), 500);
  index.remove({7});
  index.save(dir.file("index.bin"));
  VectorIndex loaded = VectorIndex::load(dir.file("index.bin"));
  EXPECT_EQ(loaded.size(), 499);
  EXPECT_EQ(loaded.metric(), Metric::InnerProduct);
  const RowMatrix queries = random_matrix(5, 32, 5);
  SearchResult a = index.search(queries.data(), 5, 10), b = loaded.search(queries.data(), 5, 10);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.scores, b.scores);
  EXPECT_EQ(loaded.reconstruct(3), index.reconstruct(3));
}

TEST(VectorIndex, CorruptOrForeignFilesAreRefused) {
  relmem_test::TempDir dir;
  const RowMatrix data = random_matrix(50, 8, 6);
  VectorIndex index(8);
  index.add(data.data(), 50);
  index.save(dir.file("index.bin"));
  const std::string bytes = relmem_test::read_bytes(dir.file("index.bin"));

  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  relmem_test::write_bytes(dir.file("flipped.bin"), flipped);
  EXPECT_THROW(VectorIndex::load(dir.file("flipped.bin")), Error);

  relmem_test::write_bytes(dir.file("short.bin"), bytes.substr(0, bytes.size() - 20));
  EXPECT_THROW(VectorIndex::load(dir.file("short.bin")), Error);

  std::string future = bytes;
  future[4] = 99;  // version field
  relmem_test::write_bytes(dir.file("future.bin"), future);
  try {
    VectorIndex::load(dir.file("future.bin"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("format version 99"), std::string::npos) << e.what();
  }
  relmem_test::write_bytes(dir.file("text.bin"), "hello");
  EXPECT_THROW(VectorIndex::load(dir.file("text.bin")), Error);
  EXPECT_THROW(VectorIndex::load(dir.file("missing.bin")), Error);
}

// The file layout is fixed: files written by earlier versions must keep loading.
TEST(VectorIndex, VersionOneFilesStillLoad) {
  const float rows[9] = {1, 2, 3, -0.5f, 0, 4, 0.125f, -8, 2.5f};
  const int64_t ids[3] = {5, 9, 11};
  std::string bytes = "RMVI";
  auto append = [&](const auto& value) { bytes.append(reinterpret_cast<const char*>(&value), sizeof value); };
  append(uint32_t{1});  // version
  append(uint32_t{3});  // dim
  append(uint32_t{1});  // metric: inner product
  append(uint64_t{3});  // count
  append(int64_t{12});  // next id
  for (int64_t id : ids) append(id);
  for (float value : rows) append(value);
  append(uint64_t{0x56c67e3a11abb968ULL});  // FNV-1a over 64-bit words, the 4 tail bytes zero-padded
  relmem_test::TempDir dir;
  relmem_test::write_bytes(dir.file("index.bin"), bytes);
  for (bool mmap : {false, true}) {  // a version 1 file cannot be mapped: it is read
    const VectorIndex loaded = VectorIndex::load(dir.file("index.bin"), "cpu", "", mmap);
    EXPECT_EQ(loaded.reconstruct(11), (std::vector<float>{0.125f, -8, 2.5f}));
    EXPECT_EQ(loaded.metric(), Metric::InnerProduct);
    EXPECT_EQ(loaded.dtype(), "fp32");
    EXPECT_FALSE(loaded.mapped());
  }
}

TEST(VectorIndex, RejectsBadInput) {
  EXPECT_THROW(VectorIndex(0), Error);
  VectorIndex index(4);
  float nan_row[4] = {1, std::nanf(""), 0, 0};
  EXPECT_THROW(index.add(nan_row, 1), Error);
  float row[4] = {1, 0, 0, 0};
  index.add(row, 1);
  EXPECT_THROW(index.search(row, 1, 0), Error);
  float zero[4] = {0, 0, 0, 0};
  SearchResult r = index.search(zero, 1, 1);  // a zero query scores 0 against everything, no NaN
  EXPECT_EQ(r.scores(0, 0), 0.0f);
}

TEST(VectorIndex, ConcurrentSearchesAgree) {
  const RowMatrix data = random_matrix(20000, 64, 7);
  const RowMatrix queries = random_matrix(16, 64, 8);
  VectorIndex index(64);
  index.add(data.data(), data.rows());
  const SearchResult expected = index.search(queries.data(), 16, 5);
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { ok[t] = index.search(queries.data(), 16, 5).ids == expected.ids; });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(std::count(ok.begin(), ok.end(), 1), 8);
}

TEST(VectorIndexInnerProducts, MatchReconstructedRowsAndRejectUnknownIds) {
  for (Metric metric : {Metric::Cosine, Metric::InnerProduct}) {
    const RowMatrix data = random_matrix(30, 24, 7), query = random_matrix(1, 24, 8);
    VectorIndex index(24, metric);
    index.add(data.data(), data.rows());
    index.remove({3});
    const std::vector<int64_t> ids = {29, 0, 12, 12};
    std::vector<float> out(ids.size());
    index.inner_products(query.data(), ids.data(), static_cast<int64_t>(ids.size()), out.data());
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::vector<float> row = index.reconstruct(ids[i]);
      EXPECT_NEAR(out[i], Eigen::Map<const Eigen::RowVectorXf>(row.data(), 24).dot(query.row(0)), 1e-5);
    }
    const int64_t missing = 3;
    EXPECT_THROW(index.inner_products(query.data(), &missing, 1, out.data()), Error);
    EXPECT_THROW(index.inner_products(query.data(), 1, &missing, 1, out.data()), Error);
  }
}
