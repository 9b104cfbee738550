// Repair of columns whose table is missing from FROM: the join added, the columns it would make ambiguous
// qualified, and every query whose intent is unclear left as written.
#include <gtest/gtest.h>

#include "relmem/sql/repair.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "test_sql_schema.hpp"

using namespace relmem::sql;

namespace {

const relmem::Schema kSchema = relmem_test::concert_schema();

std::string repaired(const std::string& sql) { return repair_joins(sql, kSchema).sql; }

void expect_unchanged(const std::string& sql) {
  JoinRepair result = repair_joins(sql, kSchema);
  EXPECT_EQ(result.sql, sql);
  EXPECT_TRUE(result.repairs.empty()) << sql;
}

}  // namespace

TEST(SqlJoinRepair, JoinsTheTableThatHasTheColumnOnItsForeignKey) {
  std::string sql = "SELECT concert_name FROM concert WHERE capacity > 10";
  JoinRepair result = repair_joins(sql, kSchema);
  EXPECT_EQ(result.sql,
            "SELECT concert_name FROM concert JOIN stadium ON concert.stadium_id = stadium.stadium_id "
            "WHERE capacity > 10");
  ASSERT_EQ(result.repairs.size(), 1u);
  EXPECT_EQ(result.repairs[0].column, "capacity");
  EXPECT_EQ(result.repairs[0].table, "stadium");
  EXPECT_EQ(result.repairs[0].position, sql.find(" WHERE"));
  // The reference goes the other way, and names the target's primary key implicitly.
  EXPECT_EQ(repaired("SELECT singer.name, count(*) FROM singer_in_concert GROUP BY singer.name"),
            "SELECT singer.name, count(*) FROM singer_in_concert JOIN singer ON singer_in_concert.singer_id = "
            "singer.singer_id GROUP BY singer.name");
}

TEST(SqlJoinRepair, JoinsAfterTheAliasAndConditionOfTheLastFromItem) {
  EXPECT_EQ(repaired("SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
                     "WHERE year = '2014'"),
            "SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
            "JOIN concert ON T2.concert_id = concert.concert_id WHERE year = '2014'");
  EXPECT_EQ(repaired("SELECT concert_name FROM concert c ORDER BY capacity"),
            "SELECT concert_name FROM concert c JOIN stadium ON c.stadium_id = stadium.stadium_id ORDER BY capacity");
}

TEST(SqlJoinRepair, JoinsTheOnlyTableWithTheColumnThatAForeignKeyLinks) {
  // singer has name too, but no foreign key links it to concert.
  EXPECT_EQ(repaired("SELECT name FROM concert"),
            "SELECT name FROM concert JOIN stadium ON concert.stadium_id = stadium.stadium_id");
}

TEST(SqlJoinRepair, QualifiesTheColumnsTheJoinWouldMakeAmbiguous) {
  // stadium has name too: the concert's own columns keep reading concert.
  EXPECT_EQ(repaired("SELECT concert_name, stadium_id FROM concert WHERE capacity > 10 AND concert_id = 1"),
            "SELECT concert_name, concert.stadium_id FROM concert JOIN stadium ON concert.stadium_id = "
            "stadium.stadium_id WHERE capacity > 10 AND concert_id = 1");
}

TEST(SqlJoinRepair, RepairsEachSelectOfACompoundInItsOwnFromClause) {
  EXPECT_EQ(repaired("SELECT concert_name FROM concert WHERE capacity > 10 UNION "
                     "SELECT concert_name FROM concert WHERE capacity < 5"),
            "SELECT concert_name FROM concert JOIN stadium ON concert.stadium_id = stadium.stadium_id WHERE "
            "capacity > 10 UNION SELECT concert_name FROM concert JOIN stadium ON concert.stadium_id = "
            "stadium.stadium_id WHERE capacity < 5");
}

TEST(SqlJoinRepair, LeavesQueriesWhoseIntentIsUnclearAlone) {
  // No foreign key links singer and stadium.
  expect_unchanged("SELECT name FROM singer WHERE capacity > 10");
  // Two foreign keys link flight and airport: which one is meant is unclear.
  relmem::Schema flights;
  flights.tables.push_back(relmem::Table{"airport", {{"code", "TEXT", true, false}, {"city", "TEXT", false, false}},
                                         {}, 0});
  flights.tables.push_back(relmem::Table{"flight",
                                         {{"id", "INTEGER", true, false}, {"source", "TEXT", false, false},
                                          {"destination", "TEXT", false, false}},
                                         {{"source", "airport", "code"}, {"destination", "airport", "code"}},
                                         0});
  EXPECT_TRUE(repair_joins("SELECT count(*) FROM flight WHERE city = 'Aberdeen'", flights).repairs.empty());
  // No table has it.
  expect_unchanged("SELECT bogus FROM concert");
  // Correct SQL.
  expect_unchanged("SELECT T1.concert_name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
                   "WHERE T2.capacity > 10");
  EXPECT_THROW(repair_joins("SELECT capacity FROM", kSchema), SyntaxError);
}
