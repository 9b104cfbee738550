// Conditions found in SQL, the database retriever's checks and feedback, and the post-processing rewrite.
#include <gtest/gtest.h>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/values/value_correction.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::TempDir;

namespace {

const char* kShop = R"sql(
  CREATE TABLE store (store_id INTEGER PRIMARY KEY, name TEXT, city TEXT, state TEXT);
  CREATE TABLE employee (id INTEGER PRIMARY KEY, name TEXT, gender TEXT, store_id INTEGER REFERENCES store(store_id));
  INSERT INTO store VALUES (1, 'Main Street Books', 'LA', 'CA'), (2, 'Harbor Goods', 'SF', 'CA'),
                           (3, 'Lakeside Market', 'CHI', 'IL'), (4, 'Bay Outlet', 'SF', 'CA');
  INSERT INTO employee VALUES (1, 'Ann', 'F', 1), (2, 'Bob', 'M', 2), (3, 'Cid', 'M', 3);
)sql";

class ValueCorrectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("shop.sqlite"), kShop);
    catalog = Catalog::open(dir.path());
    memory = std::make_unique<ValueMemory>(ValueMemory::build(catalog, std::make_shared<HashingEncoder>(256)));
  }
  TempDir dir;
  Catalog catalog;
  std::unique_ptr<ValueMemory> memory;
};

}  // namespace

TEST_F(ValueCorrectionTest, FindsStringConditionsThroughAliasesInListsAndPatterns) {
  const std::string sql =
      "SELECT T1.name FROM employee AS T1 JOIN store AS T2 ON T1.store_id = T2.store_id "
      "WHERE T2.city = \"Los Angeles\" AND T1.gender IN ('F', 'X') AND T2.name LIKE '%Books%' AND T2.state != 'CA' "
      "AND T1.id = 3 AND 'SF' = T2.city";
  const auto conditions = value_conditions(sql, catalog.schema("shop"));
  ASSERT_EQ(conditions.size(), 6u);
  EXPECT_EQ(conditions[0].table, "store");
  EXPECT_EQ(conditions[0].column, "city");
  EXPECT_EQ(conditions[0].op, "=");
  EXPECT_EQ(conditions[0].value, "Los Angeles");
  EXPECT_EQ(sql.substr(conditions[0].start, conditions[0].end - conditions[0].start), "\"Los Angeles\"");
  EXPECT_EQ(conditions[1].op, "IN");
  EXPECT_EQ(conditions[2].value, "X");
  EXPECT_EQ(conditions[3].op, "LIKE");
  EXPECT_TRUE(conditions[3].pattern());
  EXPECT_EQ(pattern_text(conditions[3]), "Books");
  EXPECT_EQ(conditions[4].op, "!=");
  EXPECT_EQ(conditions[5].value, "SF");
  EXPECT_THROW(value_conditions("SELECT FROM", catalog.schema("shop")), sql::SyntaxError);
}

TEST_F(ValueCorrectionTest, ChecksLiteralsAgainstTheDatabaseAndExplains) {
  const auto checks = check_values(
      "SELECT name FROM store WHERE city = 'Los Angeles' OR city = 'sf' OR city = 'CHI' OR name LIKE '%Harbour%'",
      "shop", catalog, *memory);
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].status, ValueStatus::NotFound);
  ASSERT_FALSE(checks[0].similar.empty());
  EXPECT_EQ(checks[0].similar[0].value, "LA");
  EXPECT_EQ(checks[1].status, ValueStatus::FoundIgnoringCase);
  EXPECT_EQ(checks[1].case_matches, std::vector<std::string>{"SF"});
  EXPECT_EQ(checks[2].status, ValueStatus::Found);
  EXPECT_TRUE(checks[2].similar.empty());
  EXPECT_EQ(checks[3].status, ValueStatus::NotFound);
  EXPECT_EQ(checks[3].similar[0].value, "Harbor Goods");

  const std::string feedback = value_feedback(checks);
  EXPECT_NE(feedback.find("Value 'Los Angeles' not found in store.city; similar stored values: 'LA'"),
            std::string::npos);
  EXPECT_NE(feedback.find("stored with other letter case: 'SF'"), std::string::npos);
  EXPECT_EQ(feedback.find("Value 'CHI'"), std::string::npos);
  EXPECT_NE(feedback.find("Pattern '%Harbour%' matches nothing in store.name; similar stored values: 'Harbor Goods'"),
            std::string::npos);
  EXPECT_EQ(value_feedback(check_values("SELECT name FROM store WHERE city = 'LA'", "shop", catalog, *memory)), "");
}

TEST_F(ValueCorrectionTest, AsksTheDatabaseWhenTheMemoryMayBeIncomplete) {
  ValueMemoryOptions capped;
  capped.max_values_per_column = 1;  // store.city keeps only 'SF'
  const ValueMemory small = ValueMemory::build(catalog, std::make_shared<HashingEncoder>(256), capped);
  ASSERT_TRUE(small.column("shop", "store", "city")->truncated);
  EXPECT_EQ(check_values("SELECT * FROM store WHERE city = 'CHI'", "shop", catalog, small)[0].status,
            ValueStatus::Found);

  // A value added after indexing: the file changed (and grew by a page), so the database is asked.
  relmem_test::make_database(dir.file("shop.sqlite"),
                             "INSERT INTO store VALUES (5, printf('%.8000c', 'x'), 'SEA', 'WA');");
  EXPECT_EQ(check_values("SELECT * FROM store WHERE city = 'SEA'", "shop", catalog, *memory)[0].status,
            ValueStatus::Found);
  EXPECT_EQ(check_values("SELECT * FROM store WHERE city = 'sea'", "shop", catalog, *memory)[0].case_matches,
            std::vector<std::string>{"SEA"});
}

TEST_F(ValueCorrectionTest, ReplacesConfidentMatchesOnly) {
  const std::string sql =
      "SELECT count(*) FROM store WHERE city = 'Los Angeles' AND state = 'CA' AND name LIKE 'Harbour%'";
  const CorrectionResult result = correct_values(sql, "shop", catalog, *memory);
  // Patterns are reported, never rewritten.
  EXPECT_EQ(result.sql, "SELECT count(*) FROM store WHERE city = 'LA' AND state = 'CA' AND name LIKE 'Harbour%'");
  ASSERT_EQ(result.replacements.size(), 1u);
  EXPECT_EQ(result.replacements[0].condition.value, "Los Angeles");
  EXPECT_EQ(result.replacements[0].replacement, "LA");
  EXPECT_EQ(result.replacements[0].reason, "similar");
  EXPECT_GE(result.replacements[0].score, CorrectionOptions{}.min_score);
  EXPECT_EQ(result.checks.size(), 3u);

  const auto cased = correct_values("SELECT * FROM employee WHERE gender = 'm'", "shop", catalog, *memory);
  EXPECT_EQ(cased.sql, "SELECT * FROM employee WHERE gender = 'M'");
  EXPECT_EQ(cased.replacements.at(0).reason, "case");

  // A value the database does not have, and nothing like it: the query is left as written.
  const std::string absent = "SELECT name FROM store WHERE city = 'Paris'";
  EXPECT_EQ(correct_values(absent, "shop", catalog, *memory).sql, absent);
  // Stored values are never touched, whatever the memory thinks.
  EXPECT_EQ(correct_values("SELECT name FROM store WHERE city = 'SF'", "shop", catalog, *memory).sql,
            "SELECT name FROM store WHERE city = 'SF'");
  CorrectionOptions strict;
  strict.min_score = 0.999;
  EXPECT_EQ(correct_values(sql, "shop", catalog, *memory, strict).replacements.size(), 0u);
  EXPECT_THROW(correct_values("SELECT name FROM", "shop", catalog, *memory), Error);
  EXPECT_THROW(correct_values("SELECT 1", "nope", catalog, *memory), Error);
}
