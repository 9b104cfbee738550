// Batches above the scan's limit on an int8 index: with AVX512-VNNI the queries are quantized to u8 and scored by
// the int8 product. Checked against the exact fp32 scores within the two roundings' bound, against a plain scalar
// version of the same quantized arithmetic (equal scores and ids), around the scan/product crossover, with odd
// dimensions, row filters, re-ranking, mapped rows, an empty index, k above the rows, and the widening fallback
// without VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "../../cpp/src/linalg/int8_gemm.hpp"
#include "relmem/index/row_store.hpp"
#include "relmem/index/topk.hpp"
#include "relmem/index/vector_index.hpp"
#include "test_random_rows.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::random_matrix;

namespace {

constexpr int kFirstProductBatch = VectorIndex::kScanMaxQueries + 1;

// How far a stored int8 row's score against a u8-quantized query can be from the exact fp32 one: the row's rounding
// (half a step of max|row| / 127 per value, times |query|) plus the query's (half a step of its range / 255 per
// value, times the stored row's values, at most |row| + half a row step each).
class Int8BatchBound {
 public:
  explicit Int8BatchBound(const RowMatrix& data)
      : row_step_(data.cwiseAbs().rowwise().maxCoeff() / 127.0f), row_sum_(data.cwiseAbs().rowwise().sum()),
        row_norm_(data.rowwise().norm()), dim_(static_cast<float>(data.cols())) {}

  float operator()(int64_t row, const RowMatrix& queries, int64_t query) const {
    const auto q = queries.row(query);
    const float query_step = (std::max(0.0f, q.maxCoeff()) - std::min(0.0f, q.minCoeff())) / 255.0f;
    const float row_error = q.cwiseAbs().sum() * row_step_(row) / 2;
    const float query_error = query_step / 2 * (row_sum_(row) + dim_ * row_step_(row) / 2);
    return row_error + query_error + 1e-4f * (1.0f + row_norm_(row) * q.norm());
  }

 private:
  Eigen::VectorXf row_step_, row_sum_, row_norm_;
  float dim_;
};

// Top k of the scalar quantized arithmetic: queries quantized as the product does, rows as the store does, scores
// (sum of (u8 - zero point) * s8) * query scale * row scale, ties to the smaller id. `rows` lists the candidates.
std::vector<std::vector<Scored>> scalar_quantized_top(const RowMatrix& data, const RowMatrix& queries, int k,
                                                      const std::vector<int64_t>& rows) {
  const int dim = static_cast<int>(data.cols());
  RowStore store(dim, RowType::INT8);
  store.append(data.data(), data.rows());
  const RowsView view = store.view();
  gemm::Int8Rows quantized;
  quantized.quantize(queries.data(), static_cast<int>(queries.rows()), dim, dim);
  std::vector<std::vector<Scored>> out;
  for (int qi = 0; qi < queries.rows(); ++qi) {
    std::vector<Scored> scored;
    for (int64_t row : rows) {
      const auto* codes = reinterpret_cast<const int8_t*>(view.row(row));
      int64_t raw = 0;
      for (int j = 0; j < dim; ++j) raw += int64_t{quantized.value(qi, j) - quantized.zero_point(qi)} * codes[j];
      scored.push_back({static_cast<float>(raw) * (quantized.scale(qi) * view.scales[row]), row});
    }
    keep_top_k(scored, static_cast<size_t>(k));
    out.push_back(scored);
  }
  return out;
}

std::vector<int64_t> all_rows(int64_t n) {
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  return rows;
}

#define REQUIRE_VNNI() \
  if (!gemm::int8_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI"

}  // namespace

// Each returned score is within the bound of its exact score, and no row is missed unless its exact score is within
// twice the largest bound of the exact k-th best: a row only displaces a better one through the roundings.
TEST(Int8Batch, ScoresAndTopKStayWithinTheQuantizationBound) {
  for (int dim : {37, 100, 512}) {
    const RowMatrix data = random_matrix(3001, dim, 21);
    const RowMatrix queries = random_matrix(100, dim, 22);
    VectorIndex index(dim, Metric::InnerProduct, "cpu", "int8");
    index.add(data.data(), data.rows());
    const RowMatrix exact = queries * data.transpose();
    const Int8BatchBound bound(data);
    std::vector<float> kth(static_cast<size_t>(queries.rows())), widest(kth.size(), 0.0f);
    for (int q = 0; q < queries.rows(); ++q) {
      std::vector<float> sorted(exact.row(q).data(), exact.row(q).data() + exact.cols());
      std::nth_element(sorted.begin(), sorted.begin() + 9, sorted.end(), std::greater<float>());
      kth[q] = sorted[9];
      for (int64_t row = 0; row < data.rows(); ++row) widest[q] = std::max(widest[q], bound(row, queries, q));
    }
    for (int n : {31, 32, 33, 48, 64, 100}) {
      const SearchResult found = index.search(queries.data(), n, 10);
      for (int q = 0; q < n; ++q) {
        for (int j = 0; j < 10; ++j) {
          const int64_t id = found.ids(q, j);
          ASSERT_GE(id, 0);
          EXPECT_NEAR(found.scores(q, j), exact(q, id), bound(id, queries, q)) << "dim " << dim << ", " << n << " queries";
          EXPECT_GE(exact(q, id), kth[q] - 2 * widest[q]) << "dim " << dim << ", " << n << " queries";
          if (j > 0) EXPECT_GE(found.scores(q, j - 1), found.scores(q, j));
        }
      }
    }
  }
}

TEST(Int8Batch, EqualsTheScalarQuantizedArithmetic) {
  REQUIRE_VNNI();
  for (int dim : {3, 37, 100, 512}) {
    const RowMatrix data = random_matrix(2500, dim, 23);
    const RowMatrix queries = random_matrix(70, dim, 24);
    VectorIndex index(dim, Metric::InnerProduct, "cpu", "int8");
    index.add(data.data(), data.rows());
    const auto want = scalar_quantized_top(data, queries, 10, all_rows(data.rows()));
    for (int n : {kFirstProductBatch, 70}) {
      const SearchResult found = index.search(queries.data(), n, 10);
      for (int q = 0; q < n; ++q)
        for (int j = 0; j < 10; ++j) {
          EXPECT_EQ(found.ids(q, j), want[q][j].id) << "dim " << dim << ", query " << q << ", rank " << j;
          EXPECT_EQ(found.scores(q, j), want[q][j].score) << "dim " << dim << ", query " << q << ", rank " << j;
        }
    }
  }
}

// search_range passes the rows of an id range as a filter: only those are scored, the same way.
TEST(Int8Batch, RowFiltersScoreOnlyTheListedRows) {
  REQUIRE_VNNI();
  const int dim = 66;
  const RowMatrix data = random_matrix(20000, dim, 25);
  const RowMatrix queries = random_matrix(40, dim, 26);
  VectorIndex index(dim, Metric::InnerProduct, "cpu", "int8");
  index.add(data.data(), data.rows());
  std::vector<int64_t> range;
  for (int64_t row = 1234; row < 17777; ++row) range.push_back(row);
  const auto want = scalar_quantized_top(data, queries, 5, range);
  const SearchResult found = index.search_range(queries.data(), 40, 5, 1234, 17777);
  for (int q = 0; q < 40; ++q)
    for (int j = 0; j < 5; ++j) {
      EXPECT_EQ(found.ids(q, j), want[q][j].id);
      EXPECT_EQ(found.scores(q, j), want[q][j].score);
    }
  const SearchResult none = index.search_range(queries.data(), 40, 5, 50000, 60000);
  EXPECT_TRUE((none.ids.array() == -1).all());
}

// A mapped index is scored straight from the file's rows: the same answers as the index it was saved from.
TEST(Int8Batch, MappedRowsGiveTheSameBatchAnswers) {
  relmem_test::TempDir dir;
  const int dim = 48;
  const RowMatrix data = random_matrix(9000, dim, 33);
  const RowMatrix queries = random_matrix(50, dim, 34);
  VectorIndex index(dim, Metric::Cosine, "cpu", "int8");
  index.add(data.data(), data.rows());
  index.save(dir.file("index.bin"));
  const VectorIndex mapped = VectorIndex::load(dir.file("index.bin"), "cpu", "", /*mmap=*/true);
  ASSERT_TRUE(mapped.mapped());
  const SearchResult want = index.search(queries.data(), 50, 7), got = mapped.search(queries.data(), 50, 7);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_EQ(got.scores, want.scores);
}

TEST(Int8Batch, EmptyIndexAndKAboveTheRows) {
  const RowMatrix queries = random_matrix(kFirstProductBatch, 20, 27);
  VectorIndex empty(20, Metric::Cosine, "cpu", "int8");
  const SearchResult nothing = empty.search(queries.data(), queries.rows(), 4);
  EXPECT_TRUE((nothing.ids.array() == -1).all());
  EXPECT_TRUE((nothing.scores.array() == -std::numeric_limits<float>::infinity()).all());

  const RowMatrix data = random_matrix(3, 20, 28);
  VectorIndex few(20, Metric::Cosine, "cpu", "int8");
  few.add(data.data(), data.rows());
  const SearchResult found = few.search(queries.data(), queries.rows(), 5);
  for (int q = 0; q < queries.rows(); ++q) {
    std::vector<int64_t> ids = {found.ids(q, 0), found.ids(q, 1), found.ids(q, 2)};
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(found.ids(q, 3), -1);
    EXPECT_EQ(found.ids(q, 4), -1);
  }
}

// Re-ranking re-scores the product's best `rerank` candidates in fp32: exact scores, and the exact top 10 unless a
// true top-10 row fell below the product's best 100.
TEST(Int8Batch, RerankGivesExactScores) {
  const int dim = 100;
  const RowMatrix data = random_matrix(5000, dim, 29);
  const RowMatrix queries = random_matrix(64, dim, 30);
  VectorIndex index(dim, Metric::InnerProduct, "cpu", "int8", /*rerank=*/100);
  index.add(data.data(), data.rows());
  const RowMatrix exact = queries * data.transpose();
  const SearchResult found = index.search(queries.data(), 64, 10);
  int hits = 0;
  for (int q = 0; q < 64; ++q) {
    std::vector<Scored> truth;
    for (int64_t row = 0; row < data.rows(); ++row) truth.push_back({exact(q, row), row});
    keep_top_k(truth, 10);
    for (int j = 0; j < 10; ++j) {
      EXPECT_NEAR(found.scores(q, j), exact(q, found.ids(q, j)), 1e-4f);
      for (const Scored& t : truth) hits += t.id == found.ids(q, j);
    }
  }
  EXPECT_GE(hits, 64 * 10 - 2);
}

// Without VNNI (forced here) a batch takes the widening path: fp32 queries, so only the rows' rounding remains.
TEST(Int8Batch, WithoutVnniTheWideningPathScoresTheBatch) {
  const int dim = 37;
  const RowMatrix data = random_matrix(2000, dim, 31);
  const RowMatrix queries = random_matrix(40, dim, 32);
  VectorIndex index(dim, Metric::InnerProduct, "cpu", "int8");
  index.add(data.data(), data.rows());
  ::setenv("RELMEM_GEMM_KERNEL", "avx2", 1);
  ASSERT_FALSE(gemm::int8_available());
  const SearchResult found = index.search(queries.data(), 40, 10);
  ::unsetenv("RELMEM_GEMM_KERNEL");
  for (int q = 0; q < 40; ++q)
    for (int j = 0; j < 10; ++j) {
      const int64_t id = found.ids(q, j);
      const float row_bound = queries.row(q).cwiseAbs().sum() * data.row(id).cwiseAbs().maxCoeff() / 254.0f + 1e-4f;
      EXPECT_NEAR(found.scores(q, j), queries.row(q).dot(data.row(id)), row_bound);
    }
}
