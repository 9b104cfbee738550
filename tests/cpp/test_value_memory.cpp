// The value memory on small databases: what it indexes, lookups, question linking, saving, refreshing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/values/value_memory.hpp"
#include "counting_encoder.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::TempDir;

namespace {

const char* kRestaurants = R"sql(
  CREATE TABLE restaurant (id INTEGER PRIMARY KEY, name TEXT, city TEXT, rating REAL, opened DATE, notes TEXT);
  INSERT INTO restaurant VALUES
    (1, 'Golden Spoon', 'LA', 4.5, '2019-05-01', NULL),
    (2, 'Blue Table', 'SF', 3.9, '2020-01-15', NULL),
    (3, 'Little Oven', 'LA', 4.1, '2018-11-30', NULL),
    (4, 'Royal Garden', 'NYC', 4.8, '2021-07-04', NULL),
    (5, 'Lucky Corner', 'CHI', 2.7, '2017-03-12', NULL);
  CREATE TABLE staff (id INTEGER PRIMARY KEY, name TEXT, gender TEXT, department TEXT, age INTEGER);
  INSERT INTO staff VALUES (1, 'Ana Ruiz', 'F', 'Mktg', 31), (2, 'Bo Chen', 'M', 'Fin', 45),
                           (3, 'Cy Adams', 'F', 'R&D', 28), (4, 'Di Park', 'F', 'Sales', 39);
)sql";

std::shared_ptr<const Encoder> hashing() { return std::make_shared<HashingEncoder>(256); }

class ValueMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("dbs/food.sqlite"), kRestaurants);
    relmem_test::make_database(dir.file("dbs/pets.sqlite"),
                               "CREATE TABLE pet (id INTEGER PRIMARY KEY, kind TEXT);"
                               "INSERT INTO pet VALUES (1, 'dog'), (2, 'cat'), (3, 'dog');");
    catalog = Catalog::open(dir.file("dbs"));
  }
  TempDir dir;
  Catalog catalog;
};

}  // namespace

TEST_F(ValueMemoryTest, IndexesTextAndKeepsRangesOfNumbersAndDates) {
  std::vector<std::string> progress;
  ValueMemory memory =
      ValueMemory::build(catalog, hashing(), {}, [&](const std::string& db, size_t done, size_t total) {
        progress.push_back(db + " " + std::to_string(done) + "/" + std::to_string(total));
      });
  EXPECT_EQ(progress, (std::vector<std::string>{"food 1/2", "pets 2/2"}));
  EXPECT_EQ(memory.databases(), (std::vector<std::string>{"food", "pets"}));

  const ColumnValues* city = memory.column("food", "RESTAURANT", "City");
  ASSERT_NE(city, nullptr);
  EXPECT_EQ(city->kind, ColumnKind::Text);
  EXPECT_EQ(city->count, 4u);                                    // LA, SF, NYC, CHI
  EXPECT_EQ(memory.database("food")->values[city->first], "LA");  // most frequent first
  EXPECT_EQ(city->vectors, 4u);

  const ColumnValues* rating = memory.column("food", "restaurant", "rating");
  EXPECT_EQ(rating->kind, ColumnKind::Numeric);
  EXPECT_DOUBLE_EQ(std::get<double>(rating->min), 2.7);
  EXPECT_DOUBLE_EQ(std::get<double>(rating->max), 4.8);
  const ColumnValues* opened = memory.column("food", "restaurant", "opened");
  EXPECT_EQ(opened->kind, ColumnKind::Date);
  EXPECT_EQ(std::get<std::string>(opened->min), "2017-03-12");
  EXPECT_EQ(memory.column("food", "restaurant", "notes")->kind, ColumnKind::Empty);
  EXPECT_EQ(memory.column("food", "restaurant", "missing"), nullptr);

  const MemoryUsage usage = memory.memory_usage();
  EXPECT_GT(usage.string_bytes, 0u);
  EXPECT_GT(usage.lexical_bytes, 0u);
  EXPECT_EQ(usage.vector_bytes, memory.database("food")->vectors->size() * 256 * sizeof(float) +
                                    memory.database("pets")->vectors->size() * 256 * sizeof(float));
}

TEST_F(ValueMemoryTest, CapsValuesPerColumnAndSkipsFreeText) {
  relmem_test::make_database(dir.file("more/wide.sqlite"), R"sql(
    CREATE TABLE t (code TEXT, essay TEXT);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
    INSERT INTO t SELECT 'code' || (i % 20), printf('%.*c', 150, 'x') || i FROM n;
  )sql");
  ValueMemoryOptions options;
  options.max_values_per_column = 5;
  options.max_vectors_per_column = 2;
  options.max_digit_share = 1.0;
  ValueMemory memory = ValueMemory::build(Catalog::open(dir.file("more")), hashing(), options);
  const ColumnValues* code = memory.column("wide", "t", "code");
  EXPECT_EQ(code->count, 5u);
  EXPECT_TRUE(code->truncated);
  EXPECT_EQ(code->vectors, 2u);
  options.max_digit_share = 0.5;  // codes with digits: lexical only
  EXPECT_EQ(
      ValueMemory::build(Catalog::open(dir.file("more")), hashing(), options).column("wide", "t", "code")->vectors, 0u);
  const ColumnValues* essay = memory.column("wide", "t", "essay");
  EXPECT_EQ(essay->kind, ColumnKind::FreeText);
  EXPECT_EQ(essay->count, 0u);
  EXPECT_TRUE(memory.lookup("wide", "t", "essay", "xxx").empty());
}

TEST_F(ValueMemoryTest, LooksUpHowAColumnStoresAWrittenValue) {
  ValueMemory memory = ValueMemory::build(catalog, hashing());
  auto top = [&](const char* table, const char* column, const char* value) {
    auto found = memory.lookup("food", table, column, value, 3);
    return found.empty() ? std::string() : found[0].value;
  };
  EXPECT_EQ(top("restaurant", "city", "Los Angeles"), "LA");
  EXPECT_EQ(top("restaurant", "city", "New York City"), "NYC");
  EXPECT_EQ(top("restaurant", "city", "Chicago"), "CHI");
  EXPECT_EQ(top("restaurant", "city", "sf"), "SF");
  EXPECT_EQ(top("staff", "gender", "female"), "F");
  EXPECT_EQ(top("staff", "department", "Marketing"), "Mktg");
  EXPECT_EQ(top("staff", "department", "Finance"), "Fin");
  EXPECT_EQ(top("staff", "department", "Research and Development"), "R&D");
  EXPECT_EQ(top("restaurant", "name", "golden spon"), "Golden Spoon");

  const auto found = memory.lookup("food", "restaurant", "city", "LA", 10);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].value, "LA");
  EXPECT_DOUBLE_EQ(found[0].score, 1.0);
  EXPECT_DOUBLE_EQ(found[0].components.exact, 1.0);
  EXPECT_EQ(found[0].table, "restaurant");
  for (size_t i = 1; i < found.size(); ++i) EXPECT_LE(found[i].score, found[i - 1].score);
  EXPECT_GE(found[1].components.semantic, 0.0);  // city has vectors

  EXPECT_TRUE(memory.lookup("food", "restaurant", "rating", "4.5").empty());
  EXPECT_THROW(memory.lookup("food", "restaurant", "nope", "x"), Error);
  EXPECT_THROW(memory.lookup("nope", "restaurant", "city", "x"), Error);
}

TEST_F(ValueMemoryTest, LinksQuestionSpansToStoredValues) {
  ValueMemory memory = ValueMemory::build(catalog, hashing());
  const std::string question = "Which restaurants in Los Angeles have a rating above 4? Also list 'Blue Table'.";
  const auto links = memory.link("food", question);
  ASSERT_GE(links.size(), 2u);
  bool la = false, blue = false;
  for (const auto& link : links) {
    EXPECT_EQ(question.substr(link.start, link.end - link.start), link.span);
    EXPECT_GE(link.match.score, LinkOptions{}.min_score);
    if (link.match.value == "LA") la = link.span == "Los Angeles" && link.match.column == "city";
    if (link.match.value == "Blue Table") blue = link.span == "Blue Table";
  }
  EXPECT_TRUE(la);
  EXPECT_TRUE(blue);
  EXPECT_TRUE(memory.link("food", "").empty());
  EXPECT_TRUE(memory.link("food", "how many are there?").empty());
}

TEST_F(ValueMemoryTest, OrdinaryWordsDoNotLinkByInitialsOrPrefixes) {
  ValueMemory memory = ValueMemory::build(catalog, hashing());
  const auto linked = [&](const std::string& question) {
    std::vector<std::string> out;
    for (const auto& link : memory.link("food", question)) out.push_back(link.span + " -> " + link.match.value);
    return out;
  };
  const auto has = [](const std::vector<std::string>& links, const std::string& link) {
    return std::find(links.begin(), links.end(), link) != links.end();
  };
  const auto flights = linked("List flights from Los Angeles to New York cheaper than 300 dollars.");
  EXPECT_TRUE(has(flights, "Los Angeles -> LA"));
  EXPECT_FALSE(has(flights, "New York cheaper -> NYC"));  // initials of a name and an ordinary word
  EXPECT_FALSE(has(linked("What are the sales figures of each month?"), "sales figures -> SF"));
  EXPECT_FALSE(has(linked("Which staff took the final exam?"), "final exam -> Fin"));
  EXPECT_TRUE(has(linked("Which staff work in San Francisco?"), "San Francisco -> SF"));
  EXPECT_TRUE(has(linked("Who works in research and development?"), "research and development -> R&D"));
  EXPECT_TRUE(has(linked("Which restaurants are in NYC?"), "NYC -> NYC"));
}

TEST_F(ValueMemoryTest, SavesLoadsAndRefreshesOnlyChangedDatabases) {
  ValueMemory memory = ValueMemory::build(catalog, hashing());
  const std::string folder = dir.file("memory");
  memory.save(folder);
  ValueMemory loaded = ValueMemory::load(folder, hashing());
  EXPECT_EQ(loaded.databases(), memory.databases());
  EXPECT_EQ(loaded.lookup("food", "restaurant", "city", "Los Angeles", 1)[0].value, "LA");
  EXPECT_EQ(loaded.database("food")->vectors->size(), memory.database("food")->vectors->size());
  ValueMemory by_name = ValueMemory::load(folder);  // encoder from the manifest
  EXPECT_EQ(by_name.encoder().name(), "hashing:256");
  EXPECT_THROW(ValueMemory::load(folder, std::make_shared<HashingEncoder>(128)), Error);
  EXPECT_THROW(ValueMemory::load(dir.file("nothing-here")), Error);

  RefreshReport same = loaded.refresh(catalog);
  EXPECT_EQ(same.unchanged, 2);
  EXPECT_TRUE(same.added.empty() && same.updated.empty() && same.removed.empty());

  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  relmem_test::make_database(dir.file("dbs/pets.sqlite"), "INSERT INTO pet VALUES (4, 'parrot');");
  std::filesystem::remove(dir.file("dbs/food.sqlite"));
  relmem_test::make_database(dir.file("dbs/zoo.sqlite"),
                             "CREATE TABLE animal (name TEXT); INSERT INTO animal VALUES ('zebra');");
  Catalog changed = Catalog::open(dir.file("dbs"));
  RefreshReport report = loaded.refresh(changed);
  EXPECT_EQ(report.updated, std::vector<std::string>{"pets"});
  EXPECT_EQ(report.added, std::vector<std::string>{"zoo"});
  EXPECT_EQ(report.removed, std::vector<std::string>{"food"});
  EXPECT_EQ(report.unchanged, 0);
  EXPECT_EQ(loaded.lookup("pets", "pet", "kind", "parot", 1)[0].value, "parrot");

  loaded.save(folder);  // the removed database's files go too
  EXPECT_FALSE(std::filesystem::exists(folder + "/food.values"));
  EXPECT_EQ(ValueMemory::load(folder).databases(), (std::vector<std::string>{"pets", "zoo"}));
}

TEST_F(ValueMemoryTest, RejectsCorruptFiles) {
  ValueMemory memory = ValueMemory::build(catalog, hashing());
  const std::string folder = dir.file("memory");
  memory.save(folder);
  relmem_test::write_bytes(folder + "/food.values", "not msgpack");
  EXPECT_THROW(ValueMemory::load(folder), Error);
  relmem_test::write_bytes(folder + "/manifest.json", "{");
  EXPECT_THROW(ValueMemory::load(folder), Error);
}

TEST_F(ValueMemoryTest, EncodesQuestionSpansOnlyWhenTheEncoderCanMakeALink) {
  auto encoder = std::make_shared<relmem_test::CountingEncoder>();
  ValueMemory memory = ValueMemory::build(catalog, encoder);
  const std::string question = "Which restaurants in Los Angeles are rated 4?";
  LinkOptions strict;  // min_score 0.85 > the encoder's weight: lexical evidence alone
  ASSERT_GT(strict.min_score, memory.weights().semantic);
  const size_t before = encoder->encoded;
  const auto links = memory.link_all({"food", "pets"}, question, strict);
  EXPECT_EQ(encoder->encoded, before);
  ASSERT_FALSE(links[0].empty());
  EXPECT_EQ(links[0][0].match.value, "LA");
  EXPECT_LT(links[0][0].match.components.semantic, 0);  // not computed

  LinkOptions loose;
  loose.min_score = 0.5;
  memory.link_all({"food", "pets"}, question, loose);
  EXPECT_GT(encoder->encoded, before);
}
