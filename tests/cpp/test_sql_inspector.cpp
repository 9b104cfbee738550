// The static detector on hand-written queries: each kind found where it should be, and nowhere else.
#include <gtest/gtest.h>

#include "relmem/sql/inspector.hpp"
#include "test_sql_schema.hpp"

using namespace relmem::sql;

namespace {

const relmem::Schema kSchema = relmem_test::concert_schema();

std::vector<std::string> kinds(const std::string& sql) {
  std::vector<std::string> names;
  for (const Diagnostic& diagnostic : inspect(sql, kSchema)) {
    EXPECT_EQ(diagnostic.severity, severity_of(diagnostic.kind));
    EXPECT_LE(diagnostic.start, diagnostic.end);
    EXPECT_LE(diagnostic.end, sql.size());
    EXPECT_FALSE(diagnostic.message.empty());
    names.push_back(kind_name(diagnostic.kind));
  }
  return names;
}

using Kinds = std::vector<std::string>;

const Diagnostic& only(const std::vector<Diagnostic>& diagnostics) {
  EXPECT_EQ(diagnostics.size(), 1u);
  return diagnostics.front();
}

}  // namespace

TEST(SqlInspector, AcceptsCorrectQueries) {
  const char* queries[] = {
      "SELECT name, country FROM singer WHERE age > 30 ORDER BY age DESC",
      "SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
      "GROUP BY T1.stadium_id",
      "SELECT name FROM singer WHERE name = \"Bob\"",
      "SELECT \"name\" FROM singer WHERE \"country\" = 'France'",
      "SELECT name FROM singer AS T1 WHERE EXISTS (SELECT * FROM singer_in_concert AS T2 "
      "WHERE T2.singer_id = T1.singer_id)",
      "WITH s AS (SELECT name, age FROM singer) SELECT name FROM s WHERE age > 30",
      "SELECT t.n FROM (SELECT name AS n FROM singer) AS t WHERE t.n LIKE 'A%'",
      "SELECT country, count(*) AS c FROM singer GROUP BY country ORDER BY c DESC LIMIT 1",
      "SELECT country FROM singer GROUP BY country HAVING count(*) > 2",
      "SELECT name FROM singer UNION SELECT name FROM stadium",
      "SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
      "JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = '2014'",
      "SELECT name FROM singer WHERE age = '30' AND rowid > 1",
      "SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)",
  };
  for (const char* sql : queries) EXPECT_EQ(kinds(sql), Kinds{}) << sql;
}

TEST(SqlInspector, FindsUnknownTablesAndColumns) {
  auto diagnostics = inspect("SELECT name FROM singers", kSchema);
  EXPECT_EQ(kind_name(only(diagnostics).kind), "unknown_table");
  EXPECT_NE(diagnostics[0].message.find("did you mean 'singer'"), std::string::npos);
  EXPECT_EQ(diagnostics[0].start, 17u);
  EXPECT_EQ(diagnostics[0].end, 24u);

  diagnostics = inspect("SELECT nam FROM singer", kSchema);
  EXPECT_EQ(kind_name(only(diagnostics).kind), "unknown_column");
  EXPECT_NE(diagnostics[0].message.find("did you mean 'name'"), std::string::npos);
  EXPECT_EQ(diagnostics[0].start, 7u);

  EXPECT_EQ(kinds("SELECT T1.nme FROM singer AS T1"), Kinds{"unknown_column"});
  EXPECT_EQ(kinds("SELECT T3.name FROM singer AS T1"), Kinds{"unknown_table"});
  EXPECT_EQ(kinds("SELECT singer.name FROM singer AS T1"), Kinds{"unknown_table"});
  EXPECT_EQ(kinds("WITH s AS (SELECT name FROM singer) SELECT country FROM s"), Kinds{"missing_join"});
  EXPECT_EQ(kinds("SELECT t.age FROM (SELECT name FROM singer) AS t"), Kinds{"unknown_column"});
  EXPECT_EQ(kinds("SELECT bogus FROM singer"), Kinds{"unknown_column"});
}

TEST(SqlInspector, FindsAmbiguousColumnsAndMissingJoins) {
  EXPECT_EQ(kinds("SELECT name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
                  "JOIN singer_in_concert AS T3 ON T1.concert_id = T3.concert_id JOIN singer AS T4 "
                  "ON T3.singer_id = T4.singer_id"),
            Kinds{"ambiguous_column"});
  EXPECT_EQ(kinds("SELECT name FROM singer WHERE capacity > 10"), Kinds{"missing_join"});
  EXPECT_EQ(kinds("SELECT stadium.name FROM singer"), Kinds{"missing_join"});
  EXPECT_EQ(kinds("SELECT T1.name FROM stadium AS T1 JOIN concert AS T2 USING (stadium_id) WHERE stadium_id > 1"),
            Kinds{});
}

TEST(SqlInspector, MissingJoinsNameTheForeignKeyToJoinOn) {
  auto diagnostics = inspect("SELECT T1.concert_name FROM concert AS T1 WHERE capacity > 10", kSchema);
  EXPECT_NE(only(diagnostics).message.find("(for example JOIN stadium ON T1.stadium_id = stadium.stadium_id)"),
            std::string::npos)
      << diagnostics[0].message;
  // A reference to the target's primary key without a column name.
  diagnostics = inspect("SELECT singer.name, count(*) FROM singer_in_concert GROUP BY singer.name", kSchema);
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_NE(diagnostics[0].message.find("JOIN singer ON singer_in_concert.singer_id = singer.singer_id"),
            std::string::npos)
      << diagnostics[0].message;
  // No foreign key between the tables: no example.
  diagnostics = inspect("SELECT name FROM singer WHERE capacity > 10", kSchema);
  EXPECT_EQ(only(diagnostics).message.find("for example"), std::string::npos) << diagnostics[0].message;
}

TEST(SqlInspector, ChecksJoins) {
  auto diagnostics = inspect(
      "SELECT T1.name, T2.concert_name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.concert_id",
      kSchema);
  EXPECT_EQ(kind_name(only(diagnostics).kind), "join_not_on_foreign_key");
  EXPECT_EQ(diagnostics[0].severity, Severity::Warning);
  EXPECT_EQ(kinds("SELECT T1.concert_name, T2.name FROM concert AS T1 JOIN stadium AS T2 "
                  "ON T1.concert_id = T2.stadium_id"),
            Kinds{"join_not_on_foreign_key"});
  // Joined on its primary key and never read: the join changes nothing.
  EXPECT_EQ(kinds("SELECT T1.concert_name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id"),
            Kinds{"redundant_join"});
  EXPECT_EQ(kinds("SELECT T1.name FROM singer AS T1 LEFT JOIN singer_in_concert AS T2 "
                  "ON T1.singer_id = T2.singer_id"),
            Kinds{"redundant_join"});
  EXPECT_EQ(kinds("SELECT T1.name FROM singer AS T1, stadium AS T2"), Kinds{"redundant_join"});
  // Joining the many side filters rows (stadiums that have concerts): not redundant.
  EXPECT_EQ(kinds("SELECT T1.name FROM stadium AS T1 JOIN concert AS T2 ON T1.stadium_id = T2.stadium_id"),
            Kinds{});
}

TEST(SqlInspector, ChecksLiteralTypes) {
  auto diagnostics = inspect("SELECT name FROM singer WHERE age = 'old'", kSchema);
  EXPECT_EQ(kind_name(only(diagnostics).kind), "type_mismatch");
  EXPECT_EQ(diagnostics[0].start, 36u);
  EXPECT_EQ(kinds("SELECT name FROM singer WHERE name = 5"), Kinds{"type_mismatch"});
  EXPECT_EQ(kinds("SELECT name FROM singer WHERE 5 > name"), Kinds{"type_mismatch"});
  EXPECT_EQ(kinds("SELECT name FROM singer WHERE age IN (1, 'x') AND age BETWEEN 'a' AND 3"),
            (Kinds{"type_mismatch", "type_mismatch"}));
  EXPECT_EQ(kinds("SELECT name FROM singer WHERE age = '31' AND name LIKE '5%'"), Kinds{});
}

TEST(SqlInspector, ChecksAggregates) {
  EXPECT_EQ(kinds("SELECT name, count(*) FROM singer GROUP BY country"), Kinds{"ungrouped_column"});
  EXPECT_EQ(kinds("SELECT name, max(age) FROM singer"), Kinds{"ungrouped_column"});
  EXPECT_EQ(kinds("SELECT singer_id, name, count(*) FROM singer GROUP BY singer_id"), Kinds{});
  EXPECT_EQ(kinds("SELECT name FROM singer ORDER BY count(*) DESC"), Kinds{"aggregate_in_order_by"});
  EXPECT_EQ(kinds("SELECT count(*) FROM singer ORDER BY count(*) DESC"), Kinds{});
  EXPECT_EQ(kinds("SELECT name FROM singer WHERE count(*) > 1"), Kinds{"misplaced_aggregate"});
  EXPECT_EQ(kinds("SELECT country FROM singer GROUP BY max(age)"), Kinds{"misplaced_aggregate"});
}

TEST(SqlInspector, ChecksCompounds) {
  EXPECT_EQ(kinds("SELECT name FROM singer UNION SELECT name, age FROM singer"), Kinds{"compound_column_count"});
  EXPECT_EQ(kinds("SELECT * FROM stadium EXCEPT SELECT stadium_id, name, capacity FROM stadium"), Kinds{});
  EXPECT_EQ(kinds("SELECT name FROM singer ORDER BY age LIMIT 1 UNION SELECT name FROM stadium"),
            Kinds{"misplaced_order_by"});
}

TEST(SqlInspector, ReportsSyntaxErrorsAsDiagnostics) {
  auto diagnostics = inspect("SELECT name FROM WHERE age > 3", kSchema);
  const Diagnostic& diagnostic = only(diagnostics);
  EXPECT_EQ(kind_name(diagnostic.kind), "syntax");
  EXPECT_EQ(diagnostic.start, 17u);
  EXPECT_NE(diagnostic.message.find("line 1, column 18"), std::string::npos) << diagnostic.message;
}

TEST(SqlInspector, NeedsASchema) {
  EXPECT_THROW(inspect(Query("SELECT 1")), relmem::Error);
}
