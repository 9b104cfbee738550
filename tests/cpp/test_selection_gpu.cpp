// Selection memory batches and devices: select_batch (texts scored in parallel) answers as select() one question at
// a time, and one question's candidates scored on several threads as on one; SelectionOptions::device / set_device fail clearly without a GPU, and with one the pool found on the GPU
// gives the same answers as the CPU's.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "test_gpu_util.hpp"

using namespace relmem;

namespace {

constexpr int kDim = 256;
constexpr int kTopics = 8;
constexpr int kPerTopic = 20;  // the pool's size: a question's pool is its topic's databases, well above the rest

const std::vector<std::string> kTopicWords = {
    "singer concert stadium song", "doctor hospital patient ward", "flight airport pilot airline",
    "student course teacher grade", "city country population river", "movie actor film studio",
    "product order customer invoice", "player team match league"};

SelectionOptions small_pool() {
  SelectionOptions options;
  options.pool = 20;
  options.candidates = 5;
  options.lexical_encoder = "hashing:1024";
  return options;
}

std::string database_name(int i) { return "db" + std::to_string(i); }

// The topic's words and the database's own word, as a question would name it.
std::string text_of(int i, const std::string& what = "") {
  return kTopicWords[static_cast<size_t>(i % kTopics)] + " " + database_name(i) + (what.empty() ? "" : " " + what);
}

// kTopics x kPerTopic databases from the hashing encoder's rows of their texts, each row with a little noise so
// that no two scores tie exactly.
void fill(SelectionMemory& memory) {
  const HashingEncoder encoder(kDim), lexical(1024);
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.1f / 16.0f);
  auto noisy = [&](RowMatrix rows) {
    for (int64_t i = 0; i < rows.size(); ++i) rows.data()[i] += noise(rng);
    return rows;
  };
  for (int i = 0; i < kTopics * kPerTopic; ++i) {
    const std::vector<std::string> tables = {text_of(i, "table one"), text_of(i, "table two")};
    const std::vector<std::string> columns = {text_of(i, "name"), text_of(i, "year"), text_of(i, "count")};
    const RowMatrix card = noisy(encoder.encode({text_of(i)})), table_rows = noisy(encoder.encode(tables));
    const RowMatrix column_rows = noisy(encoder.encode(columns));
    const RowMatrix lexical_card = lexical.encode({text_of(i)}), lexical_tables = lexical.encode(tables);
    memory.add_vectors(database_name(i), card.data(), {"one", "two"}, table_rows, lexical_card.data(),
                       &lexical_tables, &column_rows, {"value " + std::to_string(i)});
  }
}

std::vector<std::string> questions() {
  std::vector<std::string> out;
  for (int i = 0; i < kTopics * kPerTopic; i += 9) out.push_back("which " + text_of(i) + " has the most rows");
  return out;
}

// Questions of several parts too: marked (Q1: ...), and with `plain`, plain sentences (the whole question is ranked
// too, its pool drawn from two topics).
std::vector<std::string> questions_with_parts(bool plain) {
  std::vector<std::string> out = questions();
  for (int i = 0; i < 40; i += 5) {
    out.push_back("Which question has a larger number as its answer. Q1: how many " + text_of(i) + "? Q2: how many " +
                  text_of(i + 3) + "?");
    if (plain) {
      out.push_back("How many " + text_of(i + 1) + " are there? List every " + text_of(i + 2) + " with value " +
                    std::to_string(i + 2) + ".");
    }
  }
  return out;
}

void expect_same(const std::vector<DatabaseMatch>& want, const std::vector<DatabaseMatch>& got,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(got[r].database, want[r].database) << what << " rank " << r;
    EXPECT_FLOAT_EQ(got[r].score, want[r].score) << what << " rank " << r;
    EXPECT_FLOAT_EQ(got[r].probability, want[r].probability) << what << " rank " << r;
  }
}

// Every question of `questions` answered alike by `a` and `b`, by select, select_batch and select_set_batch.
void expect_alike(const SelectionMemory& a, const SelectionMemory& b, const std::vector<std::string>& questions) {
  const auto batch_a = a.select_batch(questions, 5), batch_b = b.select_batch(questions, 5);
  const auto sets_a = a.select_set_batch(questions), sets_b = b.select_set_batch(questions);
  for (size_t q = 0; q < questions.size(); ++q) {
    expect_same(batch_a[q], batch_b[q], "batch: " + questions[q]);
    expect_same(sets_a[q], sets_b[q], "set: " + questions[q]);
    expect_same(a.select(questions[q], 5), b.select(questions[q], 5), "one: " + questions[q]);
  }
}

// Constructing a memory with `device` throws relmem::Error naming `expected`.
void expect_device_error(const std::string& device, const std::string& expected) {
  SelectionOptions options = small_pool();
  options.device = device;
  try {
    SelectionMemory memory(std::make_shared<HashingEncoder>(kDim), options);
    ADD_FAILURE() << "device '" << device << "' was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
  }
}

}  // namespace

TEST(SelectionMemoryBatches, ParallelBatchesAnswerAsOneQuestionAtATime) {
  SelectionMemory memory(std::make_shared<HashingEncoder>(kDim), small_pool());
  fill(memory);
  const std::vector<std::string> asked = questions_with_parts(/*plain=*/true);
  ASSERT_GT(asked.size(), 30u);
  const auto batch = memory.select_batch(asked, 5);
  const auto sets = memory.select_set_batch(asked);
  ASSERT_EQ(batch.size(), asked.size());
  ASSERT_EQ(sets.size(), asked.size());
  for (size_t q = 0; q < asked.size(); ++q) {
    expect_same(memory.select(asked[q], 5), batch[q], "select_batch: " + asked[q]);
    expect_same(memory.select_set(asked[q]), sets[q], "select_set_batch: " + asked[q]);
  }
  EXPECT_EQ(batch[0][0].database, "db0");  // the database the question names, from the pool of its topic
  EXPECT_EQ(batch[1][0].database, "db9");
  EXPECT_EQ(batch[2][0].database, "db18");
  EXPECT_THROW(memory.select_batch(asked, 0), Error);
}

TEST(SelectionMemoryBatches, OneQuestionsCandidatesOnSeveralThreadsAnswerAsOnOne) {
  SelectionOptions options = small_pool();
  options.pool = 2000;
  options.candidates = 100;  // 160 databases: more than 64 candidates, scored in parallel
  SelectionMemory memory(std::make_shared<HashingEncoder>(kDim), options);
  fill(memory);
  const int threads = omp_get_max_threads();
  for (const std::string& question : questions_with_parts(/*plain=*/false)) {
    omp_set_num_threads(1);
    const std::vector<DatabaseMatch> alone = memory.select(question, 20);
    omp_set_num_threads(std::max(threads, 3));
    expect_same(alone, memory.select(question, 20), question);
  }
  omp_set_num_threads(threads);
}

TEST(SelectionMemoryDevice, BadDeviceNamesFailClearly) {
  expect_device_error("tpu", "unknown device 'tpu'");
  SelectionMemory memory(std::make_shared<HashingEncoder>(kDim), small_pool());
  EXPECT_THROW(memory.set_device("cuda:x"), Error);
  EXPECT_EQ(memory.options().device, "cpu");
}

TEST(SelectionMemoryDevice, WithoutAGpuCudaFailsClearlyAndTheMemoryStaysOnTheCpu) {
  if (relmem_test::have_gpu()) GTEST_SKIP() << "a GPU is present";
  expect_device_error("cuda", "selection memory on device 'cuda'");
  SelectionMemory memory(std::make_shared<HashingEncoder>(kDim), small_pool());
  fill(memory);
  const auto before = memory.select_batch(questions(), 5);
  EXPECT_THROW(memory.set_device("cuda"), Error);
  EXPECT_EQ(memory.options().device, "cpu");
  const auto after = memory.select_batch(questions(), 5);
  for (size_t q = 0; q < before.size(); ++q) expect_same(before[q], after[q], "after the failed move");
}

TEST(SelectionMemoryDevice, CudaPoolsAnswerAsTheCpu) {
  RELMEM_SKIP_WITHOUT_GPU();
  const auto encoder = std::make_shared<HashingEncoder>(kDim);
  SelectionMemory cpu(encoder, small_pool());
  fill(cpu);
  SelectionOptions on_cuda = small_pool();
  on_cuda.device = "cuda";
  SelectionMemory added(encoder, on_cuda);  // the GPU copy follows every add
  fill(added);
  EXPECT_EQ(added.options().device, "cuda:0");
  SelectionMemory moved(encoder, small_pool());  // the whole collection copied at once
  fill(moved);
  moved.set_device("cuda:0");
  EXPECT_EQ(moved.options().device, "cuda:0");
  // The topic's databases fill the pool, far above the rest on fp16 cards as on int8 ones, and are then scored
  // exactly on the CPU: the answers are the same, scores included.
  const std::vector<std::string> asked = questions_with_parts(/*plain=*/false);
  expect_alike(cpu, added, asked);
  expect_alike(cpu, moved, asked);
  for (SelectionMemory* memory : {&cpu, &added, &moved}) {
    memory->remove("db0");
    memory->remove("db17");
  }
  expect_alike(cpu, added, asked);
  expect_alike(cpu, moved, asked);
  moved.set_device("cpu");
  EXPECT_EQ(moved.options().device, "cpu");
  expect_alike(cpu, moved, asked);
}
