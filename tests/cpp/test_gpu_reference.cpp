// The CPU references of the CUDA kernels, checked against independent brute force (double
// precision, full sorts) and, for fp16, against the compiler's own _Float16 conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "relmem/common.hpp"
#include "relmem/device/precision.hpp"
#include "relmem/index/gpu/reference_kernels.hpp"
#include "relmem/index/gpu/topk_keys.hpp"
#include "relmem/index/row_store.hpp"
#include "test_gpu_util.hpp"

using namespace relmem;
using namespace relmem::gpu;

namespace {

uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Independent brute force: scores in double, full sort by (score desc, row asc), first k rows.
std::vector<int64_t> brute_force_rows(const float* queries, int64_t q, const float* rows, int dim, int64_t begin,
                                      int64_t end, const uint8_t* mask, int k, std::vector<double>* scores) {
  std::vector<std::pair<double, int64_t>> scored;
  for (int64_t r = begin; r < end; ++r) {
    if (mask && !mask[r]) continue;
    double s = 0;
    for (int d = 0; d < dim; ++d) s += static_cast<double>(queries[q * dim + d]) * rows[r * dim + d];
    scored.push_back({-s, r});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<int64_t> best;
  for (int i = 0; i < k && i < static_cast<int>(scored.size()); ++i) {
    best.push_back(scored[i].second);
    if (scores) scores->push_back(-scored[i].first);
  }
  return best;
}

void expect_keys_match_brute_force(const std::vector<uint64_t>& keys, const float* queries, int64_t n_queries,
                                   const float* rows, int dim, int64_t begin, int64_t end, const uint8_t* mask, int k) {
  std::vector<float> expected_scores(n_queries * k), got_scores(n_queries * k);
  std::vector<int64_t> expected_rows(n_queries * k), got_rows(n_queries * k);
  for (int64_t q = 0; q < n_queries; ++q) {
    std::vector<double> scores;
    const std::vector<int64_t> best = brute_force_rows(queries, q, rows, dim, begin, end, mask, k, &scores);
    for (int j = 0; j < k; ++j) {
      const bool present = j < static_cast<int>(best.size());
      expected_rows[q * k + j] = present ? best[j] : -1;
      expected_scores[q * k + j] = present ? static_cast<float>(scores[j]) : -std::numeric_limits<float>::infinity();
    }
  }
  decode_topk_keys(keys.data(), n_queries * k, got_scores.data(), got_rows.data());
  relmem_test::expect_same_topk(expected_scores.data(), expected_rows.data(), got_scores.data(), got_rows.data(),
                                n_queries, k, 1e-4f, "reference vs brute force");
}

}  // namespace

TEST(GpuPrecision, HalfConversionMatchesFloat16) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any_bits;
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, 1e9f, -1e9f,
                               std::ldexp(1.0f, -24), std::ldexp(1.0f, -25), std::ldexp(1.5f, -25),
                               std::ldexp(1.0f, -14), std::ldexp(1.0f, -15), 1.0f + std::ldexp(1.0f, -11),
                               1.0f + std::ldexp(3.0f, -11), std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 200000; ++i) {
    const float value = float_of(any_bits(rng));
    if (!std::isnan(value) && std::fabs(value) < 1e6f) values.push_back(value);
    values.push_back(std::ldexp(static_cast<float>(any_bits(rng) % 100000) / 1000.0f, -static_cast<int>(i % 30)));
  }
  for (float value : values) {
    const _Float16 expected = static_cast<_Float16>(value);
    uint16_t expected_bits;
    std::memcpy(&expected_bits, &expected, sizeof expected_bits);
    ASSERT_EQ(float_to_half_bits(value), expected_bits) << "value " << value;
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    _Float16 half;
    const uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&half, &bits, sizeof bits);
    const float expected = static_cast<float>(half);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(half_bits_to_float(bits)));
    } else {
      ASSERT_EQ(bits_of(half_bits_to_float(bits)), bits_of(expected)) << "half bits " << h;
    }
  }
}

// fp16 rows are widened eight values at a time where the CPU has F16C: a row holding every half bit pattern (and a
// dimension that leaves a tail of one) decodes to the same floats as the scalar conversion.
TEST(GpuPrecision, Fp16RowsDecodeAsTheScalarConversion) {
  std::vector<uint16_t> halves(65537);
  for (uint32_t h = 0; h < halves.size(); ++h) halves[h] = static_cast<uint16_t>(h);
  const RowsView view{RowType::FP16, static_cast<int>(halves.size()), 1,
                      reinterpret_cast<const uint8_t*>(halves.data()), nullptr};
  std::vector<float> decoded(halves.size());
  view.decode(0, decoded.data());
  for (size_t j = 0; j < halves.size(); ++j) {
    const float expected = half_bits_to_float(halves[j]);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(decoded[j])) << j;
    } else {
      ASSERT_EQ(bits_of(decoded[j]), bits_of(expected)) << "half bits " << halves[j];
    }
  }
}

TEST(GpuPrecision, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bfloat16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);       // tie: to even
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + std::ldexp(3.0f, -8)), 0x3F82);       // tie: to even
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  EXPECT_EQ(float_to_bfloat16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bfloat16_bits(float_of(0x7F7FFFFFu)), 0x7F80);  // rounds past the largest finite: inf
  EXPECT_EQ(bfloat16_bits_to_float(0x3F80), 1.0f);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (int i = 0; i < 100000; ++i) {
    const float value = normal(rng) * std::ldexp(1.0f, static_cast<int>(i % 40) - 20);
    const float rounded = round_to_precision(value, Precision::BF16);
    EXPECT_EQ(bits_of(rounded) & 0xFFFFu, 0u);
    // Within half a unit in the last place (8 significant bits), and no other bf16 value is closer.
    const float ulp = std::ldexp(1.0f, std::ilogb(value) - 7);
    ASSERT_LE(std::fabs(rounded - value), ulp / 2) << value;
  }
}

TEST(GpuPrecision, ParsesNames) {
  EXPECT_EQ(parse_precision("fp16"), Precision::FP16);
  EXPECT_EQ(parse_precision("bfloat16"), Precision::BF16);
  EXPECT_EQ(precision_name(Precision::FP32), "fp32");
  EXPECT_THROW(parse_precision("int8"), Error);
  EXPECT_EQ(max_finite(Precision::FP16), 65504.0f);
}

TEST(GpuTopkKeys, OrderFollowsScoreThenLowerRow) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (int i = 0; i < 10000; ++i) {
    const float a = normal(rng) * 100;
    const float b = normal(rng) * 100;
    const uint32_t row_a = rng() % 1000000;
    const uint32_t row_b = rng() % 1000000;
    if (a != b) EXPECT_EQ(make_topk_key(a, row_a) > make_topk_key(b, row_b), a > b);
    EXPECT_EQ(topk_key_score(make_topk_key(a, row_a)), a);
    EXPECT_EQ(topk_key_row(make_topk_key(a, row_a)), row_a);
  }
  EXPECT_GT(make_topk_key(0.5f, 3), make_topk_key(0.5f, 4));
  EXPECT_GT(make_topk_key(-std::numeric_limits<float>::infinity(), 0xFFFFFFFEu), kPaddingKey);
  float score;
  int64_t row;
  decode_topk_keys(&kPaddingKey, 1, &score, &row);
  EXPECT_EQ(row, -1);
  EXPECT_EQ(score, -std::numeric_limits<float>::infinity());
}

TEST(GpuReference, NormalizeConvertGivesUnitRowsInEachPrecision) {
  const RowMatrix data = relmem_test::random_matrix(20, 37, 5);
  RowMatrix with_zero = data;
  with_zero.row(3).setZero();
  for (Precision precision : {Precision::FP32, Precision::FP16, Precision::BF16}) {
    RowMatrix out(20, 37);
    normalize_convert_reference(with_zero.data(), 20, 37, true, precision, out.data());
    const double tolerance = precision == Precision::FP32 ? 1e-6 : precision == Precision::FP16 ? 2e-3 : 1.6e-2;
    for (int i = 0; i < 20; ++i) {
      if (i == 3) {
        EXPECT_EQ(out.row(i).squaredNorm(), 0.0f);
        continue;
      }
      EXPECT_NEAR(out.row(i).norm(), 1.0, tolerance);
      for (int d = 0; d < 37; ++d) {
        EXPECT_EQ(out(i, d), round_to_precision(out(i, d), precision));  // representable
        EXPECT_NEAR(out(i, d), data(i, d) / data.row(i).norm(), tolerance);
      }
    }
    normalize_convert_reference(data.data(), 20, 37, false, precision, out.data());
    for (int i = 0; i < 20; ++i)
      for (int d = 0; d < 37; ++d) EXPECT_EQ(out(i, d), round_to_precision(data(i, d), precision));
  }
}

TEST(GpuReference, FusedTopkEqualsBruteForceWithRangesAndMasks) {
  const int dim = 24;
  const RowMatrix rows = relmem_test::random_matrix(500, dim, 1);
  const RowMatrix queries = relmem_test::random_matrix(9, dim, 2);
  std::vector<uint8_t> mask(500);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7919) % 3 != 0;
  for (int k : {1, 10, 64, 600}) {
    std::vector<uint64_t> keys(9 * k);
    fused_topk_reference(queries.data(), 9, rows.data(), dim, 0, 500, nullptr, k, keys.data());
    expect_keys_match_brute_force(keys, queries.data(), 9, rows.data(), dim, 0, 500, nullptr, k);
    fused_topk_reference(queries.data(), 9, rows.data(), dim, 120, 377, mask.data(), k, keys.data());
    expect_keys_match_brute_force(keys, queries.data(), 9, rows.data(), dim, 120, 377, mask.data(), k);
  }
}

TEST(GpuReference, TileSelectionAndMergeEqualTheFusedReference) {
  // The GEMM path in miniature: score tiles, top-k per tile, merge of the running list with each tile.
  const int dim = 16, n = 1000, n_queries = 5, k = 25, tile = 128;
  const RowMatrix rows = relmem_test::random_matrix(n, dim, 3);
  const RowMatrix queries = relmem_test::random_matrix(n_queries, dim, 4);
  std::vector<uint8_t> mask(n);
  for (int i = 0; i < n; ++i) mask[i] = i % 5 != 2;
  const RowMatrix scores = queries * rows.transpose();
  std::vector<uint64_t> lists(n_queries * 2 * k, kPaddingKey);  // list 0: running top-k; list 1: current tile
  for (int first = 0; first < n; first += tile) {
    const int columns = std::min(tile, n - first);
    std::vector<uint64_t> tile_best(n_queries * k);
    tile_select_reference(scores.data() + first, n_queries, columns, n, first, mask.data(), k, tile_best.data());
    for (int q = 0; q < n_queries; ++q) std::copy_n(tile_best.begin() + q * k, k, lists.begin() + (q * 2 + 1) * k);
    std::vector<uint64_t> merged(n_queries * k);
    merge_topk_reference(lists.data(), n_queries, 2, k, merged.data());
    for (int q = 0; q < n_queries; ++q) std::copy_n(merged.begin() + q * k, k, lists.begin() + q * 2 * k);
  }
  std::vector<uint64_t> running(n_queries * k);
  for (int q = 0; q < n_queries; ++q) std::copy_n(lists.begin() + q * 2 * k, k, running.begin() + q * k);
  std::vector<uint64_t> fused(n_queries * k);
  fused_topk_reference(queries.data(), n_queries, rows.data(), dim, 0, n, mask.data(), k, fused.data());
  // Eigen's GEMM and the plain loop may round scores differently; compare as top-k lists.
  expect_keys_match_brute_force(running, queries.data(), n_queries, rows.data(), dim, 0, n, mask.data(), k);
  expect_keys_match_brute_force(fused, queries.data(), n_queries, rows.data(), dim, 0, n, mask.data(), k);
}

TEST(GpuReference, MergeKeepsTheBestOfAllListsAndPads) {
  const int k = 4;
  // Query 0: two lists; query 1: only padding.
  const std::vector<uint64_t> lists = {
      make_topk_key(0.9f, 1), make_topk_key(0.5f, 2), make_topk_key(0.1f, 3), kPaddingKey,
      make_topk_key(0.7f, 10), make_topk_key(0.6f, 11), kPaddingKey, kPaddingKey,
      kPaddingKey, kPaddingKey, kPaddingKey, kPaddingKey,
      kPaddingKey, kPaddingKey, kPaddingKey, kPaddingKey};
  std::vector<uint64_t> out(2 * k);
  merge_topk_reference(lists.data(), 2, 2, k, out.data());
  EXPECT_EQ(out[0], make_topk_key(0.9f, 1));
  EXPECT_EQ(out[1], make_topk_key(0.7f, 10));
  EXPECT_EQ(out[2], make_topk_key(0.6f, 11));
  EXPECT_EQ(out[3], make_topk_key(0.5f, 2));
  for (int j = 0; j < k; ++j) EXPECT_EQ(out[k + j], kPaddingKey);
}
