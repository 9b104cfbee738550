// Conditions resolved to real tables, the tables a query reads, and rewriting literals in place.
#include <gtest/gtest.h>

#include "relmem/sql/query.hpp"
#include "relmem/sql/syntax_error.hpp"
#include "test_sql_schema.hpp"

using namespace relmem::sql;

namespace {

const relmem::Schema kSchema = relmem_test::concert_schema();

std::string describe(const Condition& c) {
  return c.table + "." + c.column + " " + c.op + " " + c.literal;
}

std::vector<std::string> conditions(const std::string& sql, bool with_schema = true) {
  Query query(sql, with_schema ? std::optional<relmem::Schema>(kSchema) : std::nullopt);
  std::vector<std::string> out;
  for (const Condition& condition : query.conditions()) {
    EXPECT_EQ(condition.literal_index >= 0, true);
    out.push_back(describe(condition));
  }
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST(SqlConditions, ResolveAliasesAndUnqualifiedColumns) {
  std::string sql =
      "SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
      "JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = 2014 AND country = \"France\" "
      "AND 30 < T1.age";
  Query query(sql, kSchema);
  std::vector<Condition> found = query.conditions();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(describe(found[0]), "concert.year = 2014");
  EXPECT_EQ(found[0].literal_kind, LiteralKind::Number);
  EXPECT_EQ(describe(found[1]), "singer.country = France");
  EXPECT_EQ(found[1].literal_kind, LiteralKind::String);
  EXPECT_EQ(sql.substr(found[1].start, found[1].end - found[1].start), "\"France\"");
  EXPECT_EQ(describe(found[2]), "singer.age > 30");
  EXPECT_EQ(query.tables(), (Strings{"singer", "singer_in_concert", "concert"}));
}

TEST(SqlConditions, CoverEveryComparisonForm) {
  EXPECT_EQ(conditions("SELECT name FROM singer WHERE age IN (20, 30) AND country NOT IN ('UK') AND age BETWEEN 1 "
                       "AND 9 AND name LIKE 'A%' AND name NOT LIKE '%z' AND country IS NOT NULL AND age <> -5 "
                       "AND name == 'x' AND age >= 3"),
            (Strings{"singer.age IN 20", "singer.age IN 30", "singer.country NOT IN UK", "singer.age BETWEEN 1",
                     "singer.age BETWEEN 9", "singer.name LIKE A%", "singer.name NOT LIKE %z",
                     "singer.country IS NOT NULL", "singer.age != -5", "singer.name = x", "singer.age >= 3"}));
  EXPECT_EQ(conditions("SELECT name FROM singer WHERE name COLLATE NOCASE = 'bob' AND age + 1 = 3"),
            Strings{"singer.name = bob"});
}

TEST(SqlConditions, CarryTheSpansOfTheColumnAndTheWholeComparison) {
  const std::string sql =
      "SELECT name FROM singer WHERE 'x' = T.name AND (age COLLATE BINARY >= 3) AND age BETWEEN 1 AND 9";
  std::vector<Condition> found = Query(sql).conditions();
  ASSERT_EQ(found.size(), 4u);
  auto span = [&](size_t start, size_t end) { return sql.substr(start, end - start); };
  EXPECT_EQ(span(found[0].column_start, found[0].column_end), "T.name");
  EXPECT_EQ(span(found[0].comparison_start, found[0].comparison_end), "'x' = T.name");
  EXPECT_EQ(span(found[1].column_start, found[1].column_end), "age COLLATE BINARY");
  EXPECT_EQ(span(found[1].comparison_start, found[1].comparison_end), "age COLLATE BINARY >= 3");
  for (size_t i : {2u, 3u}) EXPECT_EQ(span(found[i].comparison_start, found[i].comparison_end), "age BETWEEN 1 AND 9");
}

TEST(SqlConditions, FollowSubqueriesAndCtesToTheirTables) {
  EXPECT_EQ(conditions("SELECT t.n FROM (SELECT name AS n FROM singer) AS t WHERE t.n = 'Bob'"),
            Strings{"singer.name = Bob"});
  EXPECT_EQ(conditions("WITH s AS (SELECT name, capacity FROM stadium) SELECT name FROM s WHERE capacity > 5"),
            Strings{"stadium.capacity > 5"});
  EXPECT_EQ(conditions("SELECT name FROM stadium WHERE stadium_id IN (SELECT stadium_id FROM concert WHERE year = "
                       "'2014')"),
            Strings{"concert.year = 2014"});
  // A double-quoted name that is a column compares two columns: no literal.
  EXPECT_EQ(conditions("SELECT name FROM singer WHERE name = \"country\""), Strings{});
}

TEST(SqlConditions, WorkWithoutASchemaWhereTheSqlSaysEnough) {
  EXPECT_EQ(conditions("SELECT a FROM t WHERE b = 'x'", false), Strings{"t.b = x"});
  EXPECT_EQ(conditions("SELECT a FROM t AS x JOIN u AS y ON x.id = y.id WHERE y.b = 1 AND c = 2", false),
            (Strings{"u.b = 1", ".c = 2"}));
}

TEST(SqlRewrite, SplicesLiteralsAndKeepsTheRestOfTheText) {
  std::string sql = "SELECT name  FROM singer\nWHERE country = \"France\" AND age>30 -- keep me";
  Query query(sql, kSchema);
  std::vector<Condition> found = query.conditions();
  ASSERT_EQ(found.size(), 2u);
  std::string rewritten = query.rewrite_literals(
      {{found[0].literal_index, LiteralValue::string("Fr'ance")}, {found[1].literal_index, LiteralValue::number(-2.5)}});
  EXPECT_EQ(rewritten, "SELECT name  FROM singer\nWHERE country = 'Fr''ance' AND age>-2.5 -- keep me");
  EXPECT_EQ(rewrite_literals("SELECT a - 5 FROM t", {{0, LiteralValue::number(int64_t{-5})}}),
            "SELECT a - -5 FROM t");
  EXPECT_EQ(rewrite_literals("SELECT a FROM t WHERE b = -5", {{0, LiteralValue::null()}}),
            "SELECT a FROM t WHERE b = NULL");
  EXPECT_EQ(LiteralValue::number(3.0).to_sql(), "3.0");
  EXPECT_EQ(LiteralValue::number(0.1).to_sql(), "0.1");
}

TEST(SqlRewrite, RejectsBadReplacements) {
  EXPECT_THROW(rewrite_literals("SELECT a FROM t WHERE b = 1", {{1, LiteralValue::null()}}), relmem::Error);
  EXPECT_THROW(rewrite_literals("SELECT a FROM t WHERE b = 1", {{-1, LiteralValue::null()}}), relmem::Error);
  EXPECT_THROW(LiteralValue::number(std::string("1; DROP TABLE t")), relmem::Error);
  EXPECT_THROW(LiteralValue::number(std::string("")), relmem::Error);
  EXPECT_THROW(LiteralValue::number(0.0 / 0.0), relmem::Error);
  EXPECT_THROW(rewrite_literals("SELECT FROM", {}), SyntaxError);
}

TEST(SqlQuery, ListsTablesOnceInOrderWithoutCtes) {
  Query query("WITH s AS (SELECT * FROM stadium) SELECT * FROM concert, s, Singer JOIN concert AS c2", kSchema);
  EXPECT_EQ(query.tables(), (Strings{"stadium", "concert", "singer"}));
  EXPECT_EQ(Query("SELECT * FROM nowhere").tables(), Strings{"nowhere"});
}
