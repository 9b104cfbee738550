// Parser, renderer and literal rewriting on hand-written SQL.
#include <gtest/gtest.h>

#include <iterator>

#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/rewrite.hpp"
#include "relmem/sql/syntax_error.hpp"

using namespace relmem::sql;

namespace {

std::string round_trip(const std::string& sql) { return render(parse(sql)); }

}  // namespace

TEST(SqlParser, RendersCanonicalText) {
  EXPECT_EQ(round_trip("select count(*) from singer"), "SELECT count(*) FROM singer");
  EXPECT_EQ(round_trip("SELECT T1.name ,  T2.x FROM a AS T1 JOIN b T2 ON T1.id  =  T2.aid WHERE T1.age > 20;"),
            "SELECT T1.name, T2.x FROM a AS T1 JOIN b T2 ON T1.id = T2.aid WHERE T1.age > 20");
  EXPECT_EQ(round_trip("SELECT DISTINCT a FROM t ORDER BY a DESC LIMIT 3 OFFSET 2"),
            "SELECT DISTINCT a FROM t ORDER BY a DESC LIMIT 3 OFFSET 2");
  EXPECT_EQ(round_trip("SELECT a FROM t LIMIT 2, 3"), "SELECT a FROM t LIMIT 3 OFFSET 2");
}

TEST(SqlParser, CoversTheSpiderDialect) {
  const char* queries[] = {
      "SELECT name FROM singer WHERE name = \"Bob\" AND country != 'O''Neil'",
      "SELECT count(DISTINCT a), max(b) FROM t GROUP BY c HAVING count(*) >= 2",
      "SELECT a FROM t WHERE b IN (SELECT b FROM u) AND c NOT IN (1, 2, 3) AND d BETWEEN 1 AND 5",
      "SELECT a FROM t WHERE b LIKE '%x%' AND c NOT LIKE 'y%' AND d IS NOT NULL AND e IS NULL",
      "SELECT a FROM t WHERE NOT EXISTS (SELECT * FROM u WHERE u.id = t.id)",
      "SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END, CAST(b AS REAL) / 2 FROM t",
      "SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END FROM t",
      "SELECT a FROM t UNION SELECT a FROM u INTERSECT SELECT a FROM v EXCEPT SELECT a FROM w",
      "SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY a",
      "SELECT x.a FROM (SELECT a FROM t) AS x, u WHERE x.a = u.a",
      "WITH c AS (SELECT a FROM t) SELECT a FROM c",
      "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c",
      "SELECT `a b`, [c d], \"e\".f FROM `t t` LEFT JOIN u USING (id)",
      "SELECT a FROM t NATURAL JOIN u CROSS JOIN v LEFT OUTER JOIN w ON v.a = w.a",
      "SELECT -a, - 5, +b, ~c, a || b, a % 2, (a + b) * c FROM t",
      "SELECT a FROM t WHERE a = (SELECT max(a) FROM t) ORDER BY a ASC, b DESC",
      "SELECT strftime('%Y', d), substr(n, 1, 3) FROM t WHERE x COLLATE NOCASE = 'a' AND y LIKE 'a!%' ESCAPE '!'",
  };
  int parsed = 0;
  for (const char* sql : queries) {
    try {
      Select select = parse(sql);
      std::string once = render(select);
      EXPECT_EQ(render(parse(once)), once) << sql;
      ++parsed;
    } catch (const SyntaxError& error) {
      ADD_FAILURE() << sql << ": " << error.what();
    }
  }
  EXPECT_EQ(parsed, static_cast<int>(std::size(queries)));
}

TEST(SqlParser, KeepsPrecedenceWhenRendering) {
  EXPECT_EQ(round_trip("SELECT (a + b) * c, a - (b - c), (a - b) - c, -(a + 1), NOT (a AND b), (a OR b) AND c FROM t"),
            "SELECT (a + b) * c, a - (b - c), a - b - c, -(a + 1), NOT (a AND b), (a OR b) AND c FROM t");
  EXPECT_EQ(round_trip("SELECT a FROM t WHERE (a = 1) = (b = 2) AND a = NOT b AND (a BETWEEN 1 AND 2) = 1"),
            "SELECT a FROM t WHERE a = 1 = (b = 2) AND a = (NOT b) AND a BETWEEN 1 AND 2 = 1");
  EXPECT_EQ(round_trip("SELECT a - -5, - -a, x ISNULL, y NOTNULL, z NOT NULL FROM t"),
            "SELECT a - -5, - -a, x IS NULL, y IS NOT NULL, z IS NOT NULL FROM t");
  // An edited tree gets the parentheses its new shape needs.
  Select select = parse("SELECT a * b FROM t");
  Expr& product = *select.cores[0].columns[0].expr;
  product.args[0] = std::move(parse("SELECT x + y").cores[0].columns[0].expr);
  EXPECT_EQ(render(select), "SELECT (x + y) * b FROM t");
}

TEST(SqlParser, NumbersLiteralsInSourceOrder) {
  Select select = parse("SELECT 'a', x FROM t WHERE y IN (1, -2.5, \"z\") AND w IS NULL LIMIT 5");
  std::vector<const Expr*> found = literals(select);
  ASSERT_EQ(found.size(), 6u);
  const char* values[] = {"a", "1", "-2.5", "z", "NULL", "5"};
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(found[i]->literal_index, static_cast<int>(i));
    EXPECT_EQ(found[i]->value, values[i]);
  }
  EXPECT_EQ(found[3]->quote, '"');
  EXPECT_EQ(found[4]->literal_kind, LiteralKind::Null);
}

TEST(SqlParser, AcceptsKeywordsThatSqliteAcceptsAsNames) {
  EXPECT_EQ(round_trip("SELECT t.match, cast.x FROM MATCH AS t JOIN CAST ON t.a = cast.b"),
            "SELECT t.match, cast.x FROM MATCH AS t JOIN CAST ON t.a = cast.b");
  EXPECT_EQ(round_trip("SELECT year, date, key FROM t ORDER BY year DESC"),
            "SELECT year, date, key FROM t ORDER BY year DESC");
  // As in SQLite, a 'string' names a table, or a column after "table.".
  Select select = parse("SELECT T2.'District Name' FROM 'frpm' AS T2");
  EXPECT_EQ(select.cores[0].columns[0].expr->column.text, "District Name");
  EXPECT_EQ(select.cores[0].from[0].name.text, "frpm");
  EXPECT_EQ(render(select), "SELECT T2.'District Name' FROM 'frpm' AS T2");
}

TEST(SqlParser, RejectsMalformedSqlWithPositions) {
  struct Case {
    const char* sql;
    size_t offset;
  };
  const Case cases[] = {
      {"", 0},
      {"SELECT", 6},
      {"SELECT a FROM", 13},
      {"SELECT a FROM t WHERE", 21},
      {"SELECT 'unterminated", 7},
      {"SELECT \"open", 7},
      {"SELECT [open", 7},
      {"SELECT a FROM t WHERE a = (1", 28},
      {"SELECT a FROM t; DROP TABLE t", 17},
      {"DELETE FROM t", 0},
      {"SELECT a FROM t WHERE b = ?", 26},
      {"SELECT 12abc", 7},
      {"SELECT X'ABC'", 7},
      {"SELECT a FROM t WHERE a BETWEEN 1", 33},
      {"SELECT CASE a END", 14},
      {"SELECT a FROM t GROUP a", 22},
      {"SELECT a, FROM t", 10},
      {"SELECT a FROM t LIMIT", 21},
      {"SELECT a FROM (SELECT b FROM u", 30},
      {"SELECT a FROM t WHERE a IN 5", 27},
      {"SELECT count(* FROM t", 15},
      {"SELECT a FROM t UNION", 21},
      {"SELECT a AS FROM t", 12},
      {"SELECT a FROM t WHERE a = 1 @", 28},
      {"SELECT a FROM t WHERE a = \x01", 26},
  };
  for (const Case& c : cases) {
    try {
      parse(c.sql);
      ADD_FAILURE() << "parsed: " << c.sql;
    } catch (const SyntaxError& error) {
      EXPECT_EQ(error.offset(), c.offset) << c.sql << ": " << error.what();
      EXPECT_NE(std::string(error.what()).find("SQL syntax error at line 1"), std::string::npos) << error.what();
    }
  }
}

TEST(SqlParser, RefusesNestingDeeperThanTheLimit) {
  std::string parentheses = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_THROW(parse("SELECT " + parentheses), SyntaxError);
  std::string chain = "SELECT 1";
  for (int i = 0; i < 20000; ++i) chain += " + 1";
  EXPECT_THROW(parse(chain), SyntaxError);
  std::string nots = "SELECT ";
  for (int i = 0; i < 5000; ++i) nots += "NOT ";
  EXPECT_THROW(parse(nots + "1"), SyntaxError);
  std::string subqueries = "SELECT 1";
  for (int i = 0; i < 2000; ++i) subqueries = "SELECT * FROM (" + subqueries + ")";
  EXPECT_THROW(parse(subqueries), SyntaxError);
  std::string collations = "SELECT a";
  for (int i = 0; i < 5000; ++i) collations += " COLLATE x";
  EXPECT_THROW(parse(collations), SyntaxError);
  // Well within the limit: fine.
  std::string moderate = "SELECT 1";
  for (int i = 0; i < 300; ++i) moderate += " OR a = " + std::to_string(i);
  EXPECT_NO_THROW(parse(moderate));
}
