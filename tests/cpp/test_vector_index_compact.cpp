// Compact stores (fp16, int8), re-ranking, the version 2 file and memory-mapped loading.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "../../cpp/src/common/checksummed_file.hpp"
#include "relmem/index/vector_index.hpp"
#include "test_random_rows.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::random_unit_rows;

namespace {

// The exact top-k ids of each query, best first.
std::vector<std::vector<int64_t>> exact_top(const RowMatrix& data, const RowMatrix& queries, int k) {
  std::vector<std::vector<int64_t>> out;
  for (int i = 0; i < queries.rows(); ++i) {
    std::vector<std::pair<float, int64_t>> scored;
    for (int j = 0; j < data.rows(); ++j) scored.push_back({-queries.row(i).dot(data.row(j)), j});
    std::partial_sort(scored.begin(), scored.begin() + k, scored.end());
    std::vector<int64_t> ids;
    for (int j = 0; j < k; ++j) ids.push_back(scored[j].second);
    out.push_back(ids);
  }
  return out;
}

double recall(const SearchResult& found, const std::vector<std::vector<int64_t>>& exact) {
  double hits = 0, total = 0;
  for (size_t q = 0; q < exact.size(); ++q) {
    const std::set<int64_t> truth(exact[q].begin(), exact[q].end());
    for (Eigen::Index j = 0; j < found.ids.cols(); ++j) hits += truth.count(found.ids(q, j));
    total += exact[q].size();
  }
  return hits / total;
}

// Largest error the store may add to <row, query>: int8 rounds each value by at most half a step of
// max|row| / 127; fp16 by at most 2^-11 of the value; accumulation order adds a little on top.
float error_bound(const std::string& dtype, const RowMatrix& data, int64_t row, const float* query) {
  const auto q = Eigen::Map<const Eigen::RowVectorXf>(query, data.cols());
  if (dtype == "int8") return q.cwiseAbs().sum() * data.row(row).cwiseAbs().maxCoeff() / 254.0f + 1e-5f;
  if (dtype == "fp16") return q.cwiseAbs().dot(data.row(row).cwiseAbs()) / 2048.0f + 1e-5f;
  return 1e-5f;
}

class CompactIndex : public ::testing::TestWithParam<std::string> {};

}  // namespace

// dim 100 is not a multiple of the kernels' 8 or 16 lanes; 1, 3, 8 and 32 queries take the scan, 40 the blocked GEMM.
TEST_P(CompactIndex, ScoresStayWithinTheStoresBoundOfExactFp32) {
  const std::string dtype = GetParam();
  const RowMatrix data = random_unit_rows(3000, 100, 1);
  const RowMatrix queries = random_unit_rows(40, 100, 2);
  VectorIndex index(100, Metric::Cosine, "cpu", dtype);
  index.add(data.data(), data.rows());
  EXPECT_EQ(index.dtype(), dtype);
  for (int n : {1, 3, 8, 32, 40}) {
    const SearchResult found = index.search(queries.data(), n, 10);
    for (int q = 0; q < n; ++q)
      for (int j = 0; j < 10; ++j) {
        const int64_t id = found.ids(q, j);
        const float exact = data.row(id).dot(queries.row(q));
        EXPECT_NEAR(found.scores(q, j), exact, error_bound(dtype, data, id, queries.row(q).data()))
            << dtype << " " << n << " queries";
        if (j > 0) EXPECT_GE(found.scores(q, j - 1), found.scores(q, j));
      }
  }
  // The scan (8 queries) and the blocked product (40) score the same stored rows (an int8 batch with VNNI quantizes
  // its queries as well: test_vector_index_int8_batch.cpp).
  const SearchResult few = index.search(queries.data(), 8, 10), many = index.search(queries.data(), 40, 10);
  if (dtype != "int8") EXPECT_TRUE(few.scores.isApprox(many.scores.topRows(8), 1e-5f));
  // Stored rows come back as the store holds them, within the same bound.
  const std::vector<float> row = index.reconstruct(17);
  for (int j = 0; j < 100; ++j) EXPECT_NEAR(row[j], data(17, j), dtype == "int8" ? 1.0f / 254 : 1e-3f);
}

// The scan's register tiles (rows x queries, by row type, batch and vector width) and their leftovers: 1003 rows
// leave 3 rows of the last block of 256 and dim 100 leaves 4 values past the last 8 or 16; every batch size up to
// the scan's limit gets the exact top 10 within the store's bound, the same as each query alone.
TEST_P(CompactIndex, EveryScanBatchSizeMatchesTheExactScores) {
  const std::string dtype = GetParam();
  const RowMatrix data = random_unit_rows(1003, 100, 3);
  const RowMatrix queries = random_unit_rows(VectorIndex::kScanMaxQueries, 100, 4);
  VectorIndex index(100, Metric::InnerProduct, "cpu", dtype);
  index.add(data.data(), data.rows());
  const std::vector<std::vector<int64_t>> exact = exact_top(data, queries, 10);
  for (int n = 1; n <= VectorIndex::kScanMaxQueries; ++n) {
    const SearchResult found = index.search(queries.data(), n, 10);
    for (int q = 0; q < n; ++q) {
      const SearchResult alone = index.search(queries.row(q).data(), 1, 10);
      for (int j = 0; j < 10; ++j) {
        const int64_t id = found.ids(q, j);
        EXPECT_NEAR(found.scores(q, j), data.row(id).dot(queries.row(q)),
                    error_bound(dtype, data, id, queries.row(q).data()))
            << dtype << " " << n << " queries";
        EXPECT_NEAR(found.scores(q, j), alone.scores(0, j), 1e-5f) << dtype << " " << n << " queries";
      }
      if (dtype == "fp32") {
        const std::vector<int64_t> ids(found.ids.row(q).data(), found.ids.row(q).data() + 10);
        EXPECT_EQ(ids, exact[static_cast<size_t>(q)]) << n << " queries";
      }
    }
  }
}

TEST_P(CompactIndex, RerankReturnsTheExactTopKAndExactScores) {
  const std::string dtype = GetParam();
  const RowMatrix data = random_unit_rows(4000, 64, 3);
  const RowMatrix queries = random_unit_rows(20, 64, 4);
  VectorIndex index(64, Metric::Cosine, "cpu", dtype, /*rerank=*/100);
  index.add(data.data(), data.rows());
  const auto exact = exact_top(data, queries, 10);
  for (int n : {1, 8, 20}) {
    const SearchResult found = index.search(queries.data(), n, 10);
    EXPECT_GE(recall(found, std::vector(exact.begin(), exact.begin() + n)), 0.99) << n;
    for (int q = 0; q < n; ++q)
      EXPECT_NEAR(found.scores(q, 0), data.row(found.ids(q, 0)).dot(queries.row(q)), 1e-5f);
  }
  EXPECT_EQ(index.reconstruct(5), std::vector<float>(data.row(5).data(), data.row(5).data() + 64));
  // Removal keeps the compact rows and the fp32 copy in step.
  index.remove({exact[0][0], 7, 3999});
  const SearchResult after = index.search(queries.data(), 1, 10);
  EXPECT_NE(after.ids(0, 0), exact[0][0]);
  EXPECT_EQ(after.ids(0, 0), exact[0][1]);
  EXPECT_FALSE(index.contains(7));
}

TEST_P(CompactIndex, SavesLoadsAndMapsTheSameIndex) {
  const std::string dtype = GetParam();
  relmem_test::TempDir dir;
  const RowMatrix data = random_unit_rows(8000, 48, 5);  // int8: 384 KiB of rows, over the mapping threshold
  const RowMatrix queries = random_unit_rows(6, 48, 6);
  for (int rerank : {0, 30}) {
    VectorIndex index(48, Metric::InnerProduct, "cpu", dtype, rerank);
    index.add(data.data(), data.rows());
    index.remove({11});  // ids no longer one consecutive run
    index.save(dir.file("index.bin"));
    VectorIndex::verify(dir.file("index.bin"));
    const SearchResult expected = index.search(queries.data(), 6, 10);
    size_t bytes_when_read = 0;
    for (bool mmap : {false, true}) {
      VectorIndex loaded = VectorIndex::load(dir.file("index.bin"), "cpu", "", mmap);
      EXPECT_EQ(loaded.dtype(), dtype);
      EXPECT_EQ(loaded.rerank(), dtype == "fp32" ? 0 : rerank);
      EXPECT_EQ(loaded.mapped(), mmap);
      EXPECT_EQ(loaded.size(), 7999);
      const SearchResult found = loaded.search(queries.data(), 6, 10);
      EXPECT_EQ(found.ids, expected.ids);
      EXPECT_EQ(found.scores, expected.scores);
      if (!mmap) bytes_when_read = loaded.memory_bytes();
      // Listed rows scored through the mapping or read from the file: the same scores (runs and single rows).
      const std::vector<int64_t> listed = {3, 4, 5, 6, 900, 12, 13, 7998, 0};
      std::vector<float> through_mapping(listed.size()), read(listed.size());
      loaded.inner_products(queries.data(), listed.data(), static_cast<int64_t>(listed.size()), through_mapping.data());
      loaded.read_listed_rows(true);
      loaded.inner_products(queries.data(), listed.data(), static_cast<int64_t>(listed.size()), read.data());
      // Several queries at once (each listed row read once for all of them): each query's scores as alone.
      const int64_t n = static_cast<int64_t>(listed.size());
      std::vector<float> all(6 * listed.size()), all_read(6 * listed.size());
      loaded.inner_products(queries.data(), 6, listed.data(), n, all_read.data());
      loaded.read_listed_rows(false);
      loaded.inner_products(queries.data(), 6, listed.data(), n, all.data());
      EXPECT_EQ(read, through_mapping);
      EXPECT_EQ(all_read, all);
      for (int64_t q = 0; q < 6; ++q) {
        std::vector<float> alone(listed.size());
        loaded.inner_products(queries.data() + q * 48, listed.data(), n, alone.data());
        for (size_t i = 0; i < listed.size(); ++i) EXPECT_NEAR(all[q * n + i], alone[i], 1e-4f) << q << " " << i;
      }
      if (mmap) {
        // Only the ids (and their map: no longer one run) are held; the rows are the file's.
        const size_t row_bytes = 7999 * 48 * (dtype == "int8" ? 1 : dtype == "fp16" ? 2 : 4);
        EXPECT_LE(loaded.memory_bytes() + row_bytes, bytes_when_read);
        // Changing a mapped index copies its rows first; the file stays as it was.
        const std::string before = relmem_test::read_bytes(dir.file("index.bin"));
        loaded.add(data.data() + 11 * 48, 1, std::vector<int64_t>{11}.data());
        EXPECT_FALSE(loaded.mapped());
        EXPECT_TRUE(loaded.contains(11));
        EXPECT_EQ(relmem_test::read_bytes(dir.file("index.bin")), before);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompactIndex, ::testing::Values("fp32", "fp16", "int8"));

TEST(CompactIndexFile, ConvertsBetweenDtypesOnLoad) {
  relmem_test::TempDir dir;
  const RowMatrix data = random_unit_rows(500, 32, 7);
  VectorIndex index(32, Metric::Cosine);
  index.add(data.data(), data.rows());
  index.save(dir.file("fp32.bin"));
  VectorIndex int8 = VectorIndex::load(dir.file("fp32.bin"), "cpu", "int8");
  EXPECT_EQ(int8.dtype(), "int8");
  EXPECT_EQ(int8.metric(), Metric::Cosine);
  EXPECT_LT(int8.memory_bytes(), index.memory_bytes() / 3);
  const SearchResult a = index.search(data.data(), 1, 1), b = int8.search(data.data(), 1, 1);
  EXPECT_EQ(a.ids(0, 0), b.ids(0, 0));
  EXPECT_THROW(VectorIndex::load(dir.file("fp32.bin"), "cpu", "int4"), Error);
}

TEST(CompactIndexFile, DamageIsRefusedWithAClearError) {
  relmem_test::TempDir dir;
  const RowMatrix data = random_unit_rows(8000, 40, 8);
  VectorIndex index(40, Metric::Cosine, "cpu", "int8");
  index.add(data.data(), data.rows());
  index.save(dir.file("index.bin"));
  const std::string bytes = relmem_test::read_bytes(dir.file("index.bin"));
  auto message = [](auto load) {
    try {
      load();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto contains = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };

  std::string damaged_ids = bytes;
  damaged_ids[64 + 8 * 10] ^= 0x01;  // the ids section starts at byte 64
  relmem_test::write_bytes(dir.file("ids.bin"), damaged_ids);
  for (bool mmap : {false, true}) {
    const std::string why = message([&] { VectorIndex::load(dir.file("ids.bin"), "cpu", "", mmap); });
    EXPECT_TRUE(contains(why, "is corrupt")) << why;
  }

  std::string damaged_rows = bytes;
  damaged_rows[bytes.size() - 100] ^= 0x01;  // inside the int8 rows
  relmem_test::write_bytes(dir.file("rows.bin"), damaged_rows);
  EXPECT_TRUE(contains(message([&] { VectorIndex::load(dir.file("rows.bin")); }), "checksum mismatch"));
  EXPECT_TRUE(contains(message([&] { VectorIndex::verify(dir.file("rows.bin")); }), "checksum mismatch"));
  // A mapped load checks the header, ids and scales only: the rows are read when searched.
  EXPECT_NO_THROW(VectorIndex::load(dir.file("rows.bin"), "cpu", "", true));

  relmem_test::write_bytes(dir.file("short.bin"), bytes.substr(0, bytes.size() - 64));
  for (bool mmap : {false, true}) {
    const std::string why = message([&] { VectorIndex::load(dir.file("short.bin"), "cpu", "", mmap); });
    EXPECT_TRUE(contains(why, "truncated") || contains(why, "checksum")) << why;
  }
  relmem_test::write_bytes(dir.file("text.bin"), "hello, not an index at all, but long enough for a header......");
  EXPECT_TRUE(contains(message([&] { VectorIndex::load(dir.file("text.bin"), "cpu", "", true); }), "bad magic"));
  EXPECT_TRUE(contains(message([&] { VectorIndex::load(dir.file("missing.bin"), "cpu", "", true); }), "cannot open"));
}

// The version 2 layout: 64-byte aligned sections, a header checksum, the whole-file checksum.
TEST(CompactIndexFile, BytesFollowTheDocumentedLayout) {
  const float rows[6] = {1, -2, 0.5f, 4, 0, -1};
  const int64_t ids[2] = {5, 9};
  VectorIndex index(3, Metric::InnerProduct, "cpu", "int8");
  index.add(rows, 2, ids);
  std::string header;
  auto append = [](std::string& out, const auto& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
  };
  append(header, uint32_t{3});   // dim
  append(header, uint32_t{1});   // metric: inner product
  append(header, uint32_t{2});   // dtype: int8
  append(header, uint32_t{0});   // rerank
  append(header, uint64_t{2});   // count
  append(header, int64_t{10});   // next id
  const float scales[2] = {2.0f / 127, 4.0f / 127};
  uint64_t hash = checksum_of_bytes(header.data(), header.size(), 8);
  hash = checksum_of_bytes(ids, sizeof ids, 8, hash);
  hash = checksum_of_bytes(scales, sizeof scales, 8, hash);
  append(header, hash);
  std::string expected = "RMVI";
  append(expected, uint32_t{2});
  expected += header;
  auto pad = [&] { expected.resize((expected.size() + 63) / 64 * 64, '\0'); };
  pad();
  for (int64_t id : ids) append(expected, id);
  pad();
  for (float scale : scales) append(expected, scale);
  pad();
  for (int8_t code : {64, -127, 32, 127, 0, -32}) append(expected, code);  // 1/2*127=63.5 rounds to even 64
  pad();
  append(expected, checksum_of_bytes(expected.data(), expected.size(), 8));
  relmem_test::TempDir dir;
  index.save(dir.file("index.bin"));
  EXPECT_EQ(relmem_test::read_bytes(dir.file("index.bin")), expected);
}
