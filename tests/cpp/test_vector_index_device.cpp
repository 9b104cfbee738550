// VectorIndex's device and dtype: CPU defaults, bad arguments, the clear error without CUDA, and
// (skipped without a GPU) the CUDA-placed index against the CPU one.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "relmem/device/cuda_device.hpp"
#include "relmem/index/vector_index.hpp"
#include "test_gpu_util.hpp"
#include "test_util.hpp"

using namespace relmem;
using gpu::Precision;
using relmem_test::tolerance_of;

namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void expect_same(const SearchResult& expected, const SearchResult& got, float tolerance, const std::string& what) {
  ASSERT_EQ(expected.ids.rows(), got.ids.rows()) << what;
  ASSERT_EQ(expected.ids.cols(), got.ids.cols()) << what;
  relmem_test::expect_same_topk(expected.scores.data(), expected.ids.data(), got.scores.data(), got.ids.data(),
                                got.ids.rows(), static_cast<int>(got.ids.cols()), tolerance, what);
}

}  // namespace

TEST(VectorIndexDevice, DefaultsToFp32OnTheCpu) {
  VectorIndex index(8);
  EXPECT_EQ(index.device(), "cpu");
  EXPECT_EQ(index.precision(), Precision::FP32);
  VectorIndex spelled_out(8, Metric::InnerProduct, "cpu", "fp32");
  EXPECT_EQ(spelled_out.device(), "cpu");
  const RowMatrix data = relmem_test::random_matrix(20, 8, 1);
  spelled_out.add(data.data(), 20);
  EXPECT_EQ(spelled_out.search(data.data(), 1, 1).ids(0, 0), 0);

  VectorIndex moved = std::move(spelled_out);
  EXPECT_EQ(moved.device(), "cpu");
  EXPECT_EQ(moved.size(), 20);
}

TEST(VectorIndexDevice, RejectsUnknownDevicesAndDtypes) {
  EXPECT_TRUE(contains(error_of([] { VectorIndex(8, Metric::Cosine, "tpu"); }), "unknown device 'tpu'"));
  EXPECT_TRUE(contains(error_of([] { VectorIndex(8, Metric::Cosine, "cuda:x"); }), "unknown device"));
  EXPECT_TRUE(contains(error_of([] { VectorIndex(8, Metric::Cosine, "cpu", "fp8"); }), "unknown vector dtype"));
  const std::string why = error_of([&] { VectorIndex(8, Metric::Cosine, "cpu", "bf16"); });
  EXPECT_TRUE(contains(why, "needs device='cuda'")) << why;
  EXPECT_TRUE(contains(error_of([] { VectorIndex(0, Metric::Cosine, "cuda"); }), "dimension"));

  relmem_test::TempDir dir;
  VectorIndex index(4);
  index.save(dir.file("index.bin"));
  EXPECT_TRUE(contains(error_of([&] { VectorIndex::load(dir.file("index.bin"), "cpu", "bf16"); }),
                       "needs device='cuda'"));
  EXPECT_TRUE(contains(error_of([&] { VectorIndex::load(dir.file("index.bin"), "gpu"); }), "unknown device"));
}

TEST(VectorIndexDevice, CudaWithoutADeviceIsAClearError) {
  std::string why_none;
  if (gpu::cuda_device_count(&why_none) > 0) {
    EXPECT_TRUE(contains(error_of([] { VectorIndex(8, Metric::Cosine, "cuda:1000"); }), "does not exist"));
    return;
  }
  relmem_test::TempDir dir;
  VectorIndex cpu(4);
  cpu.save(dir.file("index.bin"));
  const std::vector<std::function<void()>> attempts = {
      [] { VectorIndex(8, Metric::Cosine, "cuda"); },
      [] { VectorIndex(8, Metric::InnerProduct, "cuda:0", "fp16"); },
      [&] { VectorIndex::load(dir.file("index.bin"), "cuda", "bf16"); },
  };
  for (const auto& attempt : attempts) {
    const std::string why = error_of(attempt);
    EXPECT_TRUE(contains(why, "cannot place a VectorIndex on cuda")) << why;
    EXPECT_TRUE(contains(why, gpu::built_with_cuda() ? "no usable CUDA device" : "relmem was built without CUDA"))
        << why;
  }
}

// Everything VectorIndex forwards, on the GPU against the same calls on the CPU.
TEST(VectorIndexDevice, CudaMatchesTheCpu) {
  RELMEM_SKIP_WITHOUT_GPU();
  const int dim = 40;
  const RowMatrix data = relmem_test::random_matrix(900, dim, 2);
  const RowMatrix queries = relmem_test::random_matrix(9, dim, 3);
  std::vector<int64_t> ids(900);
  for (int64_t i = 0; i < 900; ++i) ids[i] = 5000 + 3 * i;
  for (Metric metric : {Metric::Cosine, Metric::InnerProduct}) {
    for (const char* dtype : {"fp32", "fp16", "bf16"}) {
      const std::string what = metric_name(metric) + " " + dtype;
      // The CPU scores exact fp32 vectors, the GPU rounded ones: the error of a score grows with its
      // magnitude, at most 1 for cosine and about 20 for the top inner products of these vectors.
      const float tolerance = tolerance_of(gpu::parse_precision(dtype)) * (metric == Metric::Cosine ? 1 : 8);
      VectorIndex cpu(dim, metric);
      VectorIndex cuda(dim, metric, "cuda", dtype);
      EXPECT_EQ(cuda.device(), "cuda:0");
      EXPECT_EQ(gpu::precision_name(cuda.precision()), dtype);
      cpu.add(data.data(), 900, ids.data());
      cuda.add(data.data(), 900, ids.data());
      EXPECT_EQ(cpu.remove({5003, 5006, 1}), 2);
      EXPECT_EQ(cuda.remove({5003, 5006, 1}), 2);
      EXPECT_EQ(cuda.size(), 898);
      EXPECT_TRUE(cuda.contains(5009));
      EXPECT_FALSE(cuda.contains(5003));
      expect_same(cpu.search(queries.data(), 9, 10), cuda.search(queries.data(), 9, 10), tolerance, what);
      expect_same(cpu.search_range(queries.data(), 9, 7, 5300, 5600),
                  cuda.search_range(queries.data(), 9, 7, 5300, 5600), tolerance, what + " range");

      relmem_test::TempDir dir;
      cuda.save(dir.file("cuda.bin"));
      const VectorIndex back_on_cpu = VectorIndex::load(dir.file("cuda.bin"));
      EXPECT_EQ(back_on_cpu.device(), "cpu");
      EXPECT_EQ(back_on_cpu.size(), 898);
      expect_same(cpu.search(queries.data(), 9, 10), back_on_cpu.search(queries.data(), 9, 10), tolerance,
                  what + " saved on cuda, loaded on cpu");
      cpu.save(dir.file("cpu.bin"));
      const VectorIndex onto_cuda = VectorIndex::load(dir.file("cpu.bin"), "cuda", dtype);
      EXPECT_EQ(onto_cuda.device(), "cuda:0");
      EXPECT_EQ(onto_cuda.ids(), cpu.ids());
      expect_same(cpu.search(queries.data(), 9, 10), onto_cuda.search(queries.data(), 9, 10), tolerance,
                  what + " saved on cpu, loaded on cuda");
    }
  }
}
