// The value memory answers correctly while another thread rebuilds, refreshes and removes its databases and learns
// aliases: every answer must be the single-thread one (without the memory's lock this crashes or reads freed values).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/values/value_memory.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

std::vector<std::string> values_of(const std::vector<ValueCandidate>& found) {
  std::vector<std::string> values;
  for (const ValueCandidate& candidate : found) values.push_back(candidate.value);
  return values;
}

std::vector<std::string> spans_of(const std::vector<ValueLink>& links) {
  std::vector<std::string> spans;
  for (const ValueLink& link : links) spans.push_back(link.span + "=" + link.match.value);
  return spans;
}

}  // namespace

TEST(ValueMemoryConcurrency, AnswersStayCorrectWhileTheMemoryIsUpdated) {
  relmem_test::TempDir dir;
  std::string cities = "CREATE TABLE shop (id INTEGER PRIMARY KEY, city TEXT, owner TEXT); INSERT INTO shop VALUES ";
  for (int i = 0; i < 300; ++i)
    cities += std::string(i ? "," : "") + "(" + std::to_string(i) + ", 'City " + std::to_string(i) + "', 'Owner " +
              std::to_string(i % 40) + "')";
  relmem_test::make_database(dir.file("dbs/shops.sqlite"), cities + ";");
  relmem_test::make_database(dir.file("dbs/pets.sqlite"),
                             "CREATE TABLE pet (id INTEGER PRIMARY KEY, kind TEXT);"
                             "INSERT INTO pet VALUES (1, 'dog'), (2, 'cat'), (3, 'dog');");
  const Catalog catalog = Catalog::open(dir.file("dbs"));
  ValueMemory memory = ValueMemory::build(catalog, std::make_shared<HashingEncoder>(128));

  const std::vector<std::string> written = {"city 12", "Cty 250", "owner 7", "Ownr 39"};
  const std::vector<std::string> columns = {"city", "city", "owner", "owner"};
  const std::string question = "which shops in City 42 belong to Owner 3";
  std::vector<std::vector<std::string>> expected;
  for (size_t i = 0; i < written.size(); ++i)
    expected.push_back(values_of(memory.lookup("shops", "shop", columns[i], written[i], 5)));
  const std::vector<std::string> expected_links = spans_of(memory.link("shops", question));
  ASSERT_FALSE(expected_links.empty());

  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::atomic<int> answers{0}, updates{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto failed = [&](const std::string& what) {
    std::lock_guard lock(failures_mutex);
    failures.push_back(what);
  };

  std::thread updater([&] {
    while (std::chrono::steady_clock::now() < stop) {
      memory.add_database(catalog, "shops");
      memory.remove_database("pets");
      memory.refresh(catalog);  // adds pets back
      memory.add_alias("pets", "pet", "kind", "doggo", "dog", "test");
      ++updates;
    }
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {  // quick reads, many: they hit the moments the updater swaps a database
    readers.emplace_back([&] {
      while (std::chrono::steady_clock::now() < stop) {
        const auto shops = memory.find_database("shops");
        if (!shops || shops->find_column("shop", "owner") == nullptr) failed("snapshot");
        memory.find_database("pets");
        memory.contains("pets");
      }
    });
  }
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      while (std::chrono::steady_clock::now() < stop) {
        try {
          const size_t i = static_cast<size_t>(answers.load() + t) % written.size();
          const auto got = values_of(memory.lookup("shops", "shop", columns[i], written[i], 5));
          if (got != expected[i]) failed("lookup of " + written[i]);
          if (spans_of(memory.link("shops", question)) != expected_links) failed("link");
          if (memory.column("shops", "shop", "city") == nullptr) failed("column");
          if (memory.memory_usage().total() == 0 || memory.databases().empty()) failed("usage");
        } catch (const std::exception& error) {
          failed(error.what());
        }
        ++answers;
      }
    });
  }
  updater.join();
  for (std::thread& reader : readers) reader.join();
  ASSERT_TRUE(failures.empty()) << failures.size() << " failures, first: " << failures.front();
  EXPECT_GT(answers.load(), 20);
  EXPECT_GT(updates.load(), 5);
}
