// GpuVectorIndex: its id bookkeeping over the CPU reference store (runs everywhere), the clear error
// without a device, and the CUDA store against the reference store (skipped without a GPU).
#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <thread>

#include "relmem/index/gpu/gpu_vector_index.hpp"
#include "relmem/index/gpu/vector_store.hpp"
#include "relmem/index/vector_index.hpp"
#include "test_gpu_util.hpp"
#include "test_util.hpp"

using namespace relmem;
using namespace relmem::gpu;
using relmem_test::tolerance_of;

namespace {

GpuVectorIndex reference_index(int dim, Metric metric, Precision precision) {
  return GpuVectorIndex(dim, metric, make_reference_vector_store(dim, precision, metric == Metric::Cosine));
}

void expect_same(const SearchResult& expected, const SearchResult& got, float tolerance, const std::string& what) {
  ASSERT_EQ(expected.ids.rows(), got.ids.rows());
  ASSERT_EQ(expected.ids.cols(), got.ids.cols());
  relmem_test::expect_same_topk(expected.scores.data(), expected.ids.data(), got.scores.data(), got.ids.data(),
                                got.ids.rows(), static_cast<int>(got.ids.cols()), tolerance, what);
}

}  // namespace

TEST(GpuVectorIndexReference, MatchesTheCpuVectorIndex) {
  const RowMatrix data = relmem_test::random_matrix(700, 40, 1);
  const RowMatrix queries = relmem_test::random_matrix(13, 40, 2);
  for (Metric metric : {Metric::Cosine, Metric::InnerProduct}) {
    VectorIndex cpu(40, metric);
    cpu.add(data.data(), data.rows());
    for (Precision precision : {Precision::FP32, Precision::FP16, Precision::BF16}) {
      GpuVectorIndex index = reference_index(40, metric, precision);
      index.add(data.data(), data.rows());
      for (int k : {1, 10, 700, 750}) {
        const SearchResult expected = cpu.search(queries.data(), queries.rows(), k);
        const SearchResult got = index.search(queries.data(), queries.rows(), k);
        // Inner products are not normalized: scale the tolerance with the vector norms (about sqrt(40)^2).
        const float tolerance = tolerance_of(precision) * (metric == Metric::Cosine ? 1.0f : 40.0f);
        expect_same(expected, got, tolerance, metric_name(metric) + "/" + precision_name(precision));
      }
    }
  }
}

TEST(GpuVectorIndexReference, KeepsIdsThroughAddAndRemove) {
  const RowMatrix data = relmem_test::random_matrix(50, 8, 3);
  GpuVectorIndex index = reference_index(8, Metric::Cosine, Precision::FP16);
  index.add(data.data(), 30);
  const std::vector<int64_t> explicit_ids = {100, 90, 95, 80, 200, 150, 160, 170, 175, 180,
                                             181, 182, 183, 184, 185, 186, 187, 188, 189, 190};
  index.add(data.data() + 30 * 8, 20, explicit_ids.data());
  EXPECT_EQ(index.size(), 50);
  EXPECT_TRUE(index.contains(95));
  EXPECT_THROW(index.add(data.data(), 1, explicit_ids.data()), Error);  // duplicate id
  const int64_t negative = -4;
  EXPECT_THROW(index.add(data.data(), 1, &negative), Error);
  EXPECT_EQ(index.remove({3, 95, 95, 12345, 200}), 3);
  EXPECT_EQ(index.size(), 47);
  EXPECT_FALSE(index.contains(95));
  EXPECT_THROW(index.reconstruct(3), Error);
  // Order of the survivors is kept, and each id still maps to its own vector.
  std::vector<int64_t> expected_ids;
  for (int64_t i = 0; i < 30; ++i)
    if (i != 3) expected_ids.push_back(i);
  for (int64_t id : explicit_ids)
    if (id != 95 && id != 200) expected_ids.push_back(id);
  EXPECT_EQ(index.ids(), expected_ids);
  RowMatrix normalized = data;
  normalized.rowwise().normalize();
  for (int64_t i = 0; i < 50; ++i) {
    const int64_t id = i < 30 ? i : explicit_ids[i - 30];
    if (!index.contains(id)) continue;
    const std::vector<float> stored = index.reconstruct(id);
    for (int d = 0; d < 8; ++d) EXPECT_NEAR(stored[d], normalized(i, d), 1e-3f) << "id " << id;
  }
  // Auto ids continue after the largest id so far.
  index.add(data.data(), 1);
  EXPECT_TRUE(index.contains(201));
  // A vector searched for finds itself first.
  const SearchResult self = index.search(data.data() + 31 * 8, 1, 3);
  EXPECT_EQ(self.ids(0, 0), 90);
}

TEST(GpuVectorIndexReference, RestrictsSearchToIdRangesAndSubsets) {
  const RowMatrix data = relmem_test::random_matrix(300, 12, 4);
  const RowMatrix queries = relmem_test::random_matrix(6, 12, 5);
  std::vector<int64_t> shuffled(300);
  std::iota(shuffled.begin(), shuffled.end(), 0);
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(6));
  for (bool ascending : {true, false}) {
    GpuVectorIndex index = reference_index(12, Metric::Cosine, Precision::FP32);
    VectorIndex cpu(12, Metric::Cosine);
    const int64_t* ids = ascending ? nullptr : shuffled.data();
    index.add(data.data(), 300, ids);
    cpu.add(data.data(), 300, ids);
    const std::string what = ascending ? "ascending ids" : "shuffled ids";
    expect_same(cpu.search_range(queries.data(), 6, 7, 50, 90), index.search_range(queries.data(), 6, 7, 50, 90),
                1e-5f, what + " range");
    const SearchResult empty = index.search_range(queries.data(), 6, 3, 90, 50);
    EXPECT_EQ(empty.ids(0, 0), -1);
    // A subset is the same as an index holding only those vectors.
    std::vector<int64_t> subset = {5, 77, 123, 299, 4000};
    VectorIndex only(12, Metric::Cosine);
    for (int64_t id : subset) {
      if (id >= 300) continue;
      const int64_t row = ascending ? id : std::find(shuffled.begin(), shuffled.end(), id) - shuffled.begin();
      only.add(data.data() + row * 12, 1, &id);
    }
    const SearchResult got = index.search_subset(queries.data(), 6, 5, subset);
    expect_same(only.search(queries.data(), 6, 5), got, 1e-5f, what + " subset");
    EXPECT_EQ(got.ids(0, 4), -1);  // only four ids exist
  }
}

TEST(GpuVectorIndexReference, RejectsBadInput) {
  GpuVectorIndex index = reference_index(4, Metric::InnerProduct, Precision::FP16);
  const float too_large[4] = {1e6f, 0, 0, 0};
  EXPECT_THROW(index.add(too_large, 1), Error);
  const float not_finite[4] = {std::numeric_limits<float>::quiet_NaN(), 0, 0, 0};
  EXPECT_THROW(index.add(not_finite, 1), Error);
  const float fine[4] = {1, 2, 3, 4};
  index.add(fine, 1);
  EXPECT_THROW(index.search(fine, 1, 0), Error);
  EXPECT_THROW(index.search(not_finite, 1, 1), Error);
  EXPECT_THROW(GpuVectorIndex(0, Metric::Cosine, make_reference_vector_store(4, Precision::FP16, true)), Error);
  EXPECT_THROW(GpuVectorIndex(4, Metric::Cosine, make_reference_vector_store(4, Precision::FP16, false)), Error);
  EXPECT_THROW(parse_search_algorithm("quick"), Error);
  EXPECT_EQ(parse_search_algorithm(search_algorithm_name(SearchAlgorithm::GemmSort)), SearchAlgorithm::GemmSort);
}

TEST(GpuVectorIndexReference, SavesInTheVectorIndexFormat) {
  relmem_test::TempDir dir;
  const RowMatrix data = relmem_test::random_matrix(40, 6, 7);
  GpuVectorIndex index = reference_index(6, Metric::Cosine, Precision::BF16);
  std::vector<int64_t> ids(40);
  std::iota(ids.begin(), ids.end(), 1000);
  index.add(data.data(), 40, ids.data());
  index.save(dir.file("index.bin"));
  const VectorIndex loaded = VectorIndex::load(dir.file("index.bin"));
  EXPECT_EQ(loaded.size(), 40);
  EXPECT_EQ(loaded.dim(), 6);
  // VectorIndex re-normalizes the bf16-rounded unit vectors (norms within a few bf16 ulps of 1).
  for (int64_t id : ids) {
    const std::vector<float> expected = index.reconstruct(id);
    const std::vector<float> got = loaded.reconstruct(id);
    for (int d = 0; d < 6; ++d) EXPECT_NEAR(got[d], expected[d], 5e-3f);
  }
}

TEST(GpuVectorIndexReference, ConcurrentSearchesAgree) {
  const RowMatrix data = relmem_test::random_matrix(400, 16, 8);
  const RowMatrix queries = relmem_test::random_matrix(4, 16, 9);
  GpuVectorIndex index = reference_index(16, Metric::Cosine, Precision::FP16);
  index.add(data.data(), 400);
  const SearchResult expected = index.search(queries.data(), 4, 5);
  std::vector<std::thread> threads;
  std::vector<SearchResult> results(4);
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { results[t] = index.search(queries.data(), 4, 5); });
  for (auto& thread : threads) thread.join();
  for (const SearchResult& result : results) EXPECT_EQ(result.ids, expected.ids);
}

TEST(GpuVectorIndexCuda, WithoutADeviceConstructionFailsClearly) {
  std::string why;
  if (cuda_device_count(&why) > 0) {
    GpuVectorIndex index(8, Metric::Cosine, Precision::FP16);
    EXPECT_EQ(index.size(), 0);
    EXPECT_THROW(GpuVectorIndex(8, Metric::Cosine, Precision::FP16, 1000), Error);
    return;
  }
  EXPECT_FALSE(why.empty());
  try {
    GpuVectorIndex index(8, Metric::Cosine, Precision::FP16);
    FAIL() << "constructed a GPU index without a CUDA device";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("CUDA"), std::string::npos) << error.what();
  }
}

// The CUDA store against the reference store, for every precision, algorithm and batch shape.
TEST(GpuVectorIndexCuda, SearchMatchesTheReferenceStore) {
  RELMEM_SKIP_WITHOUT_GPU();
  const int dim = 72;  // not a multiple of the kernels' 64-dimension chunks
  const RowMatrix data = relmem_test::random_matrix(5000, dim, 10);
  const RowMatrix queries = relmem_test::random_matrix(130, dim, 11);
  for (Metric metric : {Metric::Cosine, Metric::InnerProduct}) {
    for (Precision precision : {Precision::FP32, Precision::FP16, Precision::BF16}) {
      GpuVectorIndex reference = reference_index(dim, metric, precision);
      GpuVectorIndex device(dim, metric, precision);
      reference.add(data.data(), data.rows());
      device.add(data.data(), data.rows());
      // Both sides store identically rounded values, except that a normalized value may differ by one
      // ulp (the norm is summed in another order); beyond that only the summation order differs.
      const float tolerance = metric == Metric::Cosine ? tolerance_of(precision) : 2e-3f;
      for (int n_queries : {1, 7, 64, 130}) {
        for (int k : {1, 10, 100, 1024}) {
          const SearchResult expected = reference.search(queries.data(), n_queries, k);
          for (SearchAlgorithm algorithm : {SearchAlgorithm::Auto, SearchAlgorithm::Fused, SearchAlgorithm::FusedSimt,
                                            SearchAlgorithm::GemmSelect, SearchAlgorithm::GemmSort}) {
            device.set_search_algorithm(algorithm);
            const std::string what = metric_name(metric) + "/" + precision_name(precision) + "/" +
                                     search_algorithm_name(algorithm) + " q=" + std::to_string(n_queries) +
                                     " k=" + std::to_string(k);
            expect_same(expected, device.search(queries.data(), n_queries, k), tolerance, what);
          }
        }
      }
    }
  }
}

// Enough rows that the GEMM path scores them in several score tiles (each tile's selection starting from the
// top-k of the tiles before it) and that both paths merge more lists than one merge block takes.
TEST(GpuVectorIndexCuda, ManyRowsMatchTheReference) {
  RELMEM_SKIP_WITHOUT_GPU();
  const int dim = 40;
  const RowMatrix data = relmem_test::random_matrix(150000, dim, 14);
  const RowMatrix queries = relmem_test::random_matrix(300, dim, 15);
  GpuVectorIndex reference = reference_index(dim, Metric::Cosine, Precision::FP16);
  GpuVectorIndex device(dim, Metric::Cosine, Precision::FP16);
  reference.add(data.data(), data.rows());
  device.add(data.data(), data.rows());
  for (SearchAlgorithm algorithm : {SearchAlgorithm::Fused, SearchAlgorithm::GemmSelect}) {
    device.set_search_algorithm(algorithm);
    for (int n_queries : {1, 7, 300}) {
      for (int k : {1, 10, 100}) {
        expect_same(reference.search(queries.data(), n_queries, k), device.search(queries.data(), n_queries, k),
                    tolerance_of(Precision::FP16),
                    search_algorithm_name(algorithm) + " q=" + std::to_string(n_queries) + " k=" + std::to_string(k));
      }
    }
  }
}

TEST(GpuVectorIndexCuda, StoresRemovesAndRestrictsLikeTheReference) {
  RELMEM_SKIP_WITHOUT_GPU();
  const RowMatrix data = relmem_test::random_matrix(3000, 33, 12);
  const RowMatrix queries = relmem_test::random_matrix(20, 33, 13);
  GpuVectorIndex reference = reference_index(33, Metric::Cosine, Precision::FP16);
  GpuVectorIndex device(33, Metric::Cosine, Precision::FP16);
  // Several adds (storage growth), then a removal of every third id (compaction).
  for (int64_t first = 0; first < 3000; first += 1000) {
    reference.add(data.data() + first * 33, 1000);
    device.add(data.data() + first * 33, 1000);
  }
  std::vector<int64_t> removed;
  for (int64_t id = 0; id < 3000; id += 3) removed.push_back(id);
  EXPECT_EQ(device.remove(removed), reference.remove(removed));
  EXPECT_EQ(device.ids(), reference.ids());
  for (int64_t id : {1, 2, 1501, 2999}) {
    const std::vector<float> expected = reference.reconstruct(id);
    const std::vector<float> got = device.reconstruct(id);
    for (int d = 0; d < 33; ++d) EXPECT_NEAR(got[d], expected[d], 1e-3f) << "id " << id;
  }
  const float tolerance = tolerance_of(Precision::FP16);
  for (SearchAlgorithm algorithm : {SearchAlgorithm::Fused, SearchAlgorithm::GemmSelect}) {
    device.set_search_algorithm(algorithm);
    const std::string name = search_algorithm_name(algorithm);
    expect_same(reference.search(queries.data(), 20, 10), device.search(queries.data(), 20, 10), tolerance, name);
    expect_same(reference.search_range(queries.data(), 20, 10, 700, 1900),
                device.search_range(queries.data(), 20, 10, 700, 1900), tolerance, name + " range");
    const std::vector<int64_t> subset = {1, 5, 7, 100, 101, 2000, 2998};
    expect_same(reference.search_subset(queries.data(), 20, 10, subset),
                device.search_subset(queries.data(), 20, 10, subset), tolerance, name + " subset");
  }
  device.set_search_algorithm(SearchAlgorithm::GemmSort);
  EXPECT_THROW(device.search_subset(queries.data(), 1, 1, {1}), Error);
  // Auto takes GemmSort past the selection kernels' k limit, except for a masked search (a subset), where the
  // limit stays an error, as it does for an explicit selection algorithm.
  device.set_search_algorithm(SearchAlgorithm::Auto);
  expect_same(reference.search(queries.data(), 20, 1500), device.search(queries.data(), 20, 1500), tolerance,
              "auto past the k limit");
  EXPECT_THROW(device.search_subset(queries.data(), 1, 1025, {1}), Error);
  device.set_search_algorithm(SearchAlgorithm::Fused);
  EXPECT_THROW(device.search(queries.data(), 1, 1025), Error);
}

TEST(GpuVectorIndexCuda, SavesAndLoadsThroughTheCpuFormat) {
  RELMEM_SKIP_WITHOUT_GPU();
  relmem_test::TempDir dir;
  const RowMatrix data = relmem_test::random_matrix(100, 10, 14);
  GpuVectorIndex device(10, Metric::Cosine, Precision::FP32);
  device.add(data.data(), 100);
  device.save(dir.file("index.bin"));
  const std::unique_ptr<GpuVectorIndex> loaded = GpuVectorIndex::load(dir.file("index.bin"), Precision::FP32);
  EXPECT_EQ(loaded->ids(), device.ids());
  expect_same(device.search(data.data(), 5, 4), loaded->search(data.data(), 5, 4), 1e-5f, "loaded");
}
