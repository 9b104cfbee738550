// Repair of counts that can only be one row per row of a table: the referencing table joined, the rows grouped by
// the referenced key, and every query that could mean something else left as written.
#include <gtest/gtest.h>

#include "relmem/sql/repair.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "test_sql_schema.hpp"

using namespace relmem::sql;

namespace {

const relmem::Schema kSchema = relmem_test::concert_schema();

std::string repaired(const std::string& sql, const relmem::Schema& schema = kSchema) {
  return repair_counts(sql, schema).sql;
}

void expect_unchanged(const std::string& sql, const relmem::Schema& schema = kSchema) {
  CountRepair result = repair_counts(sql, schema);
  EXPECT_EQ(result.sql, sql);
  EXPECT_TRUE(result.repairs.empty()) << sql;
}

}  // namespace

TEST(SqlCountRepair, CountsTheReferencingRowsOfAnUngroupedQuery) {
  // SQLite refuses this one ("misuse of aggregate"); only singer_in_concert references singer.
  CountRepair result = repair_counts("SELECT name FROM singer ORDER BY count(*) DESC LIMIT 1", kSchema);
  EXPECT_EQ(result.sql,
            "SELECT name FROM singer JOIN singer_in_concert ON singer.singer_id = singer_in_concert.singer_id "
            "GROUP BY singer.singer_id ORDER BY count(*) DESC LIMIT 1");
  ASSERT_EQ(result.repairs.size(), 1u);
  EXPECT_EQ(result.repairs[0].table, "singer_in_concert");
  EXPECT_EQ(result.repairs[0].group_by, " GROUP BY singer.singer_id");
  // The grouping goes after WHERE.
  EXPECT_EQ(repaired("SELECT name FROM stadium WHERE capacity > 10 ORDER BY count(*)"),
            "SELECT name FROM stadium JOIN concert ON stadium.stadium_id = concert.stadium_id WHERE capacity > 10 "
            "GROUP BY stadium.stadium_id ORDER BY count(*)");
}

TEST(SqlCountRepair, CountsTheReferencingRowsOfAQueryGroupedByTheKey) {
  // Grouped by the key, every count is 1; the join makes singer_id ambiguous, so it is qualified.
  CountRepair result =
      repair_counts("SELECT singer_id, name FROM singer AS T1 GROUP BY singer_id ORDER BY count(*) DESC", kSchema);
  EXPECT_EQ(result.sql,
            "SELECT T1.singer_id, name FROM singer AS T1 JOIN singer_in_concert ON T1.singer_id = "
            "singer_in_concert.singer_id GROUP BY T1.singer_id ORDER BY count(*) DESC");
  ASSERT_EQ(result.repairs.size(), 1u);
  EXPECT_EQ(result.repairs[0].group_by, "");
}

TEST(SqlCountRepair, LeavesQueriesThatCouldMeanSomethingElseAlone) {
  expect_unchanged("SELECT name FROM singer GROUP BY name ORDER BY count(*) DESC");  // a real grouping
  expect_unchanged("SELECT count(*) FROM singer ORDER BY count(*)");                 // an aggregate result
  expect_unchanged("SELECT name FROM singer ORDER BY name");                         // no count
  expect_unchanged("SELECT name FROM singer GROUP BY singer_id HAVING count(*) > 1 ORDER BY count(*)");
  expect_unchanged("SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
                   "GROUP BY T1.singer_id ORDER BY count(*) DESC");               // already joined
  expect_unchanged("SELECT concert_name FROM singer_in_concert ORDER BY count(*)");  // nothing references it
  expect_unchanged("SELECT name FROM singer UNION SELECT name FROM stadium ORDER BY count(*)");
  expect_unchanged("SELECT name FROM nowhere ORDER BY count(*)");
  // Two foreign keys reference singer: which rows to count is unclear.
  relmem::Schema two = kSchema;
  two.tables.push_back(relmem::Table{"fan",
                                     {relmem::Column{"fan_id", "INTEGER", true, false},
                                      relmem::Column{"singer_id", "INTEGER", false, false}},
                                     {relmem::ForeignKey{"singer_id", "singer", "singer_id"}},
                                     0});
  expect_unchanged("SELECT name FROM singer ORDER BY count(*) DESC LIMIT 1", two);
  EXPECT_THROW(repair_counts("SELECT name FROM singer ORDER BY", kSchema), SyntaxError);
}
