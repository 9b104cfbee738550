// Int8 rows for the approximate first pass: scores close to the exact inner products, top-n close to the exact
// ranking, replace/remove, and clear errors.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <random>

#include "relmem/common.hpp"
#include "relmem/index/quantized_rows.hpp"
#include "test_random_rows.hpp"

using namespace relmem;

TEST(QuantizedRows, ScoresAreCloseToExactInnerProducts) {
  for (int dim : {7, 32, 100, 512}) {  // padded and unpadded widths
    const RowMatrix rows = relmem_test::random_unit_rows(200, dim, 1), queries = relmem_test::random_unit_rows(5, dim, 2);
    QuantizedRows codes(dim);
    for (int i = 0; i < rows.rows(); ++i) codes.add(i, rows.row(i).data());
    for (int q = 0; q < queries.rows(); ++q)
      for (int i = 0; i < rows.rows(); ++i)
        EXPECT_NEAR(codes.inner_product(i, queries.row(q).data()), rows.row(i).dot(queries.row(q)), 0.01) << dim;
  }
}

TEST(QuantizedRows, TopAgreesWithTheExactRanking) {
  const int dim = 64;
  const RowMatrix rows = relmem_test::random_unit_rows(5000, dim, 3), queries = relmem_test::random_unit_rows(20, dim, 4);
  QuantizedRows codes(dim);
  for (int i = 0; i < rows.rows(); ++i) codes.add(1000 + i, rows.row(i).data());
  for (int q = 0; q < queries.rows(); ++q) {
    const Eigen::VectorXf exact = rows * queries.row(q).transpose();
    std::vector<int64_t> order(exact.size());
    for (int64_t i = 0; i < exact.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return exact[a] > exact[b]; });
    const std::vector<int64_t> top = codes.top(queries.row(q).data(), 50);
    ASSERT_EQ(top.size(), 50u);
    EXPECT_EQ(top, codes.top(queries.row(q).data(), 50));  // deterministic
    // Every row of the exact top 10 is in the approximate top 50, and the approximate best is an exact top-3 row.
    for (int i = 0; i < 10; ++i) EXPECT_NE(std::find(top.begin(), top.end(), 1000 + order[i]), top.end());
    EXPECT_NE(std::find(order.begin(), order.begin() + 3, top[0] - 1000), order.begin() + 3);
    for (size_t i = 1; i < top.size(); ++i)
      EXPECT_GE(codes.inner_product(top[i - 1], queries.row(q).data()), codes.inner_product(top[i], queries.row(q).data()));
  }
  EXPECT_EQ(codes.top(queries.row(0).data(), 100000).size(), 5000u);  // n beyond the size: everything
}

// Rows past one 4,096-row block are split among threads: the top-n is the one a single thread finds.
TEST(QuantizedRows, TopIsTheSameOnOneThreadAndOnSeveral) {
  const int dim = 48;
  const RowMatrix rows = relmem_test::random_unit_rows(20000, dim, 5), queries = relmem_test::random_unit_rows(8, dim, 6);
  QuantizedRows codes(dim);
  for (int i = 0; i < rows.rows(); ++i) codes.add(7 * i, rows.row(i).data());
  const int threads = omp_get_max_threads();
  for (int q = 0; q < queries.rows(); ++q) {
    for (int n : {1, 100, 2000}) {
      omp_set_num_threads(1);
      const std::vector<int64_t> alone = codes.top(queries.row(q).data(), n);
      omp_set_num_threads(std::max(threads, 3));
      EXPECT_EQ(codes.top(queries.row(q).data(), n), alone) << "query " << q << ", n " << n;
    }
  }
  omp_set_num_threads(threads);
}

TEST(QuantizedRows, ReplaceAndRemove) {
  const RowMatrix rows = relmem_test::random_unit_rows(3, 16, 5);
  QuantizedRows codes(16);
  codes.add(7, rows.row(0).data());
  codes.add(8, rows.row(1).data());
  codes.add(9, rows.row(2).data());
  EXPECT_EQ(codes.top(rows.row(1).data(), 1), std::vector<int64_t>{8});
  codes.add(8, rows.row(2).data());  // replaced: 8 and 9 now tie, the smaller id first
  EXPECT_EQ(codes.size(), 3);
  EXPECT_EQ(codes.top(rows.row(2).data(), 2), (std::vector<int64_t>{8, 9}));
  EXPECT_TRUE(codes.remove(7));
  EXPECT_FALSE(codes.remove(7));
  EXPECT_EQ(codes.size(), 2);
  EXPECT_EQ(codes.top(rows.row(0).data(), 5).size(), 2u);
  EXPECT_NEAR(codes.inner_product(9, rows.row(2).data()), 1.0f, 0.01);  // moved into 7's slot, still right
  const std::vector<float> zeros(16, 0.0f);
  EXPECT_FLOAT_EQ(codes.inner_product(9, zeros.data()), 0.0f);
}

TEST(QuantizedRows, ClearErrors) {
  EXPECT_THROW(QuantizedRows(0), Error);
  QuantizedRows codes(4);
  const float bad[4] = {1.0f, std::numeric_limits<float>::infinity(), 0.0f, 0.0f};
  EXPECT_THROW(codes.add(1, bad), Error);
  const float row[4] = {1.0f, 0.0f, 0.0f, 0.0f};
  codes.add(1, row);
  EXPECT_THROW(codes.top(row, 0), Error);
  EXPECT_THROW(codes.inner_product(2, row), Error);
}
