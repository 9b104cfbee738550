// Sparse rows of the lexical channel: dot products (every row length, including the unrolled loop's remainders) and
// norms equal the dense ones, document frequencies follow adds and removes, files round-trip (read or mapped),
// version 1 files still load and damaged files are refused.
#include <gtest/gtest.h>

#include <random>

#include "relmem/common.hpp"
#include "relmem/memories/text/sparse_vectors.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

bool same(const SparseVectors::RowPass& a, const SparseVectors::RowPass& b) {
  return a.dot == b.dot && a.weighted_norm == b.weighted_norm && a.covered == b.covered;
}

}  // namespace

TEST(SparseVectors, DotProductsAndNormsEqualDenseOnes) {
  const int dim = 64;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> query(dim), weights(dim);
  for (auto& v : query) v = normal(rng);
  for (auto& v : weights) v = std::abs(normal(rng));
  SparseVectors vectors(dim);
  std::vector<std::vector<float>> dense;
  for (int nnz = 0; nnz <= 40; ++nnz) {  // every remainder of the 16-entry SIMD steps, and two full ones
    std::vector<float> row(dim, 0.0f);
    for (int j = 0; j < nnz; ++j) row[static_cast<size_t>((j * 7 + nnz) % dim)] = normal(rng);
    vectors.add(nnz, row.data());
    dense.push_back(row);
  }
  for (int id = 0; id <= 40; ++id) {
    double want = 0.0, norm = 0.0;
    for (int j = 0; j < dim; ++j) {
      want += double(dense[id][j]) * query[j];
      norm += double(dense[id][j] * weights[j]) * (dense[id][j] * weights[j]);
    }
    EXPECT_NEAR(vectors.dot(id, query.data()), want, 1e-5) << "nnz " << id;
    double covered = 0.0;  // the mass's entries where the row has a value, whatever the value
    for (int j = 0; j < dim; ++j) covered += dense[id][j] != 0.0f ? query[j] : 0.0f;
    const SparseVectors::RowPass pass = vectors.pass(id, query.data(), weights.data(), query.data());
    EXPECT_NEAR(pass.dot, want, 1e-5);
    EXPECT_NEAR(pass.weighted_norm, std::sqrt(norm), 1e-5);
    EXPECT_NEAR(pass.covered, covered, 1e-5);
    EXPECT_EQ(vectors.pass(id, query.data(), weights.data()).covered, 0.0f);
  }
  EXPECT_THROW(vectors.dot(99, query.data()), Error);
  EXPECT_THROW(vectors.pass(99, query.data(), weights.data()), Error);
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

// Version 1 files, written before the mapped layout, keep loading.
TEST(SparseVectors, VersionOneFilesStillLoad) {
  std::string bytes = "RMSV";
  auto append = [&](const auto& value) { bytes.append(reinterpret_cast<const char*>(&value), sizeof value); };
  append(uint32_t{1});  // version
  append(uint32_t{4});  // dim
  append(uint64_t{2});  // rows, by id
  append(int64_t{3}), append(uint32_t{1}), append(uint32_t{0}), append(0.25f);
  append(int64_t{7}), append(uint32_t{2}), append(uint32_t{1}), append(1.5f), append(uint32_t{3}), append(-2.0f);
  append(uint64_t{0xb878c868c669018cULL});  // FNV-1a of the bytes before it
  relmem_test::TempDir dir;
  relmem_test::write_bytes(dir.file("v.sparse"), bytes);
  for (bool mmap : {false, true}) {
    const SparseVectors loaded = SparseVectors::load(dir.file("v.sparse"), mmap);
    EXPECT_EQ(loaded.ids(), (std::vector<int64_t>{3, 7}));
    EXPECT_EQ(loaded.document_frequency(), (std::vector<int64_t>{1, 1, 0, 1}));
    const float q[4] = {1, 2, 3, 4};
    EXPECT_FLOAT_EQ(loaded.dot(7, q), 1.5f * 2 - 2.0f * 4);
  }
}

// A file large enough to be mapped gives the same rows mapped and read; a mapped set copies its rows on the first
// change and saves the same bytes; damage anywhere is refused.
TEST(SparseVectors, MappedFilesMatchReadOnesAndDamageIsRefused) {
  const int dim = 512;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  SparseVectors vectors(dim);
  std::vector<float> row(dim), query(dim), weights(dim, 0.5f);
  for (auto& v : query) v = uniform(rng);
  for (int64_t id = 0; id < 600; ++id) {  // about 600 x 100 x 8 bytes: mapped
    std::fill(row.begin(), row.end(), 0.0f);
    for (int j = 0; j < 100; ++j) row[static_cast<size_t>((id * 31 + j * 5) % dim)] = uniform(rng);
    vectors.add(id * 3, row.data());
  }
  relmem_test::TempDir dir;
  const std::string path = dir.file("v.sparse");
  vectors.save(path);
  SparseVectors mapped = SparseVectors::load(path, /*mmap=*/true);
  const SparseVectors read = SparseVectors::load(path);
  ASSERT_TRUE(mapped.mapped());
  EXPECT_FALSE(read.mapped());
  EXPECT_EQ(mapped.ids(), vectors.ids());
  EXPECT_EQ(mapped.document_frequency(), vectors.document_frequency());
  for (int64_t id : {0, 3, 897, 1797}) {
    EXPECT_EQ(mapped.dot(id, query.data()), vectors.dot(id, query.data()));
    EXPECT_EQ(read.dot(id, query.data()), vectors.dot(id, query.data()));
    EXPECT_TRUE(same(mapped.pass(id, query.data(), weights.data(), query.data()),
                     vectors.pass(id, query.data(), weights.data(), query.data())));
  }
  EXPECT_FALSE(mapped.contains(1));
  EXPECT_THROW(mapped.dot(1, query.data()), Error);
  mapped.save(dir.file("again.sparse"));
  EXPECT_EQ(relmem_test::read_bytes(dir.file("again.sparse")), relmem_test::read_bytes(path));
  EXPECT_TRUE(mapped.remove(3));  // copies the rows, then changes them
  EXPECT_FALSE(mapped.mapped());
  EXPECT_EQ(mapped.size(), 599);
  EXPECT_EQ(mapped.dot(6, query.data()), vectors.dot(6, query.data()));

  const std::string bytes = relmem_test::read_bytes(path);
  auto expect_refused = [&](size_t at, const std::string& message) {
    std::string damaged = bytes;
    damaged[at] ^= 0x20;
    relmem_test::write_bytes(dir.file("bad.sparse"), damaged);
    for (bool mmap : {false, true}) {
      try {
        SparseVectors::load(dir.file("bad.sparse"), mmap);
        ADD_FAILURE() << "loaded a file damaged at " << at << " (mmap " << mmap << ")";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      }
    }
  };
  expect_refused(12, "corrupt");      // the header (its reserved word)
  expect_refused(200, "corrupt");     // a document frequency
  // The last entry's index (60,000 entries fill their section: it ends at the checksum): a full read refuses the
  // file, a mapped one refuses the row when it is used.
  std::string damaged = bytes;
  damaged[bytes.size() - 13] ^= 0x20;
  relmem_test::write_bytes(dir.file("bad.sparse"), damaged);
  EXPECT_THROW(SparseVectors::load(dir.file("bad.sparse")), Error);
  const SparseVectors damaged_mapped = SparseVectors::load(dir.file("bad.sparse"), true);
  EXPECT_THROW(damaged_mapped.dot(1797, query.data()), Error);
  EXPECT_THROW(damaged_mapped.pass(1797, query.data(), weights.data()), Error);
  EXPECT_EQ(damaged_mapped.dot(0, query.data()), vectors.dot(0, query.data()));
  // Consecutive ids (the selection memory's): rows are found by position.
  SparseVectors run(dim);
  for (int64_t id = 10; id < 610; ++id) {  // 600 x 60 x 8 bytes: mapped
    std::fill(row.begin(), row.end(), 0.0f);
    for (int j = 0; j < 60; ++j) row[static_cast<size_t>((id * 7 + j * 11) % dim)] = uniform(rng);
    run.add(id, row.data());
  }
  run.save(dir.file("run.sparse"));
  const SparseVectors mapped_run = SparseVectors::load(dir.file("run.sparse"), true);
  ASSERT_TRUE(mapped_run.mapped());
  EXPECT_FALSE(mapped_run.contains(9));
  EXPECT_FALSE(mapped_run.contains(610));
  EXPECT_TRUE(mapped_run.contains(609));
  EXPECT_EQ(mapped_run.dot(609, query.data()), run.dot(609, query.data()));
  EXPECT_THROW(mapped_run.dot(-5, query.data()), Error);
  // Rows of consecutive ids at once (one read of a mapped file) equal them one by one, mapped or not.
  std::vector<SparseVectors::RowPass> many(40);
  for (const SparseVectors* set : std::initializer_list<const SparseVectors*>{&run, &mapped_run}) {
    set->passes(12, 40, query.data(), weights.data(), query.data(), many.data());
    for (int64_t i = 0; i < 40; ++i)
      EXPECT_TRUE(same(many[static_cast<size_t>(i)], set->pass(12 + i, query.data(), weights.data(), query.data())));
  }
  EXPECT_FALSE(same(many[0], many[1]));
  EXPECT_THROW(mapped_run.passes(600, 40, query.data(), weights.data(), nullptr, many.data()), Error);

  relmem_test::write_bytes(dir.file("short.sparse"), bytes.substr(0, bytes.size() - 9));
  EXPECT_THROW(SparseVectors::load(dir.file("short.sparse"), true), Error);
  EXPECT_THROW(SparseVectors::load(dir.file("short.sparse")), Error);
}
