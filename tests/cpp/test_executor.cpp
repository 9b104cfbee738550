#include <gtest/gtest.h>

#include "relmem/catalog/executor.hpp"
#include "test_util.hpp"

using namespace relmem;

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path = dir.file("concert.sqlite");
    relmem_test::make_database(path, relmem_test::kConcertScript);
    original = relmem_test::read_bytes(path);
  }
  void ExpectRefused(const std::string& sql) {
    QueryResult result = execute_readonly(path, sql);
    ASSERT_FALSE(result.ok()) << sql;
    EXPECT_EQ(result.error->kind, SqlErrorKind::Refused) << sql << ": " << result.error->message;
    EXPECT_EQ(relmem_test::read_bytes(path), original) << "file changed after: " << sql;
  }
  relmem_test::TempDir dir;
  std::string path;
  std::string original;
};

TEST_F(ExecutorTest, ReturnsTypedRows) {
  QueryResult result = execute_readonly(path, "SELECT name, capacity, capacity / 3.0, NULL FROM stadium ORDER BY stadium_id");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.columns, (std::vector<std::string>{"name", "capacity", "capacity / 3.0", "NULL"}));
  ASSERT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(result.rows[0][0]), "Raith Rovers");
  EXPECT_EQ(std::get<int64_t>(result.rows[0][1]), 10104);
  EXPECT_DOUBLE_EQ(std::get<double>(result.rows[0][2]), 10104 / 3.0);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(result.rows[0][3]));
}

TEST_F(ExecutorTest, WithAndTrailingSemicolonsAreFine) {
  QueryResult result = execute_readonly(path, "  -- comment\n WITH s AS (SELECT * FROM stadium) SELECT count(*) FROM s ;; ");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(std::get<int64_t>(result.rows[0][0]), 3);
}

TEST_F(ExecutorTest, RefusesEveryWrite) {
  ExpectRefused("DROP TABLE stadium");
  ExpectRefused("INSERT INTO stadium VALUES (9, 'x', 'y', 1)");
  ExpectRefused("UPDATE stadium SET capacity = 0");
  ExpectRefused("DELETE FROM stadium");
  ExpectRefused("ATTACH DATABASE 'other.sqlite' AS other");
  ExpectRefused("PRAGMA writable_schema = 1");
  ExpectRefused("SELECT load_extension('libevil')");
  ExpectRefused("SELECT 1; DROP TABLE stadium");
  ExpectRefused("WITH x AS (SELECT 1) DELETE FROM stadium");
  ExpectRefused("CREATE TABLE t (a)");
  ExpectRefused("VACUUM");
}

TEST_F(ExecutorTest, SyntaxErrorsCarrySqliteMessage) {
  QueryResult result = execute_readonly(path, "SELECT nme FROM stadium");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error->kind, SqlErrorKind::Prepare);
  EXPECT_NE(result.error->message.find("no such column: nme"), std::string::npos);
}

TEST_F(ExecutorTest, TimeLimitStopsRunawayQuery) {
  ExecOptions options;
  options.timeout_seconds = 0.2;
  QueryResult result =
      execute_readonly(path, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
                       options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error->kind, SqlErrorKind::Timeout);
}

TEST_F(ExecutorTest, RowCapTruncates) {
  ExecOptions options;
  options.max_rows = 2;
  QueryResult result = execute_readonly(path, "SELECT * FROM stadium", options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.rows.size(), 2u);
  EXPECT_TRUE(result.truncated);
}

TEST_F(ExecutorTest, MissingAndNonSqliteFiles) {
  QueryResult missing = execute_readonly(dir.file("missing.sqlite"), "SELECT 1 FROM t");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error->kind, SqlErrorKind::Open);
  relmem_test::write_bytes(dir.file("text.sqlite"), std::string(4096, 'x'));
  QueryResult junk = execute_readonly(dir.file("text.sqlite"), "SELECT * FROM t");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error->message.find("not a database"), std::string::npos) << junk.error->message;
  EXPECT_FALSE(execute_readonly(path, "").ok());
  EXPECT_FALSE(execute_readonly(path, "   ").ok());
}

TEST_F(ExecutorTest, HugeValuesComeBackWhole) {
  QueryResult result = execute_readonly(path, "SELECT printf('%.*c', 5000000, 'x')");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(std::get<std::string>(result.rows[0][0]).size(), 5000000u);
}

TEST_F(ExecutorTest, ByteCapBoundsValuesAndResults) {
  ExecOptions options;
  options.max_bytes = 1000;
  for (const char* sql : {"SELECT zeroblob(5000)", "SELECT randomblob(5000)",
                          "SELECT group_concat(name, printf('%.*c', 600, 'x')) FROM stadium"}) {
    QueryResult result = execute_readonly(path, sql, options);
    ASSERT_FALSE(result.ok()) << sql;
    EXPECT_EQ(result.error->kind, SqlErrorKind::Runtime) << sql;
    EXPECT_NE(result.error->message.find("too big"), std::string::npos) << result.error->message;
  }
  QueryResult too_long = execute_readonly(path, "SELECT printf('%.*c', 5000, 'x')", options);
  ASSERT_TRUE(too_long.ok()) << too_long.error->message;
  EXPECT_TRUE(std::holds_alternative<std::monostate>(too_long.rows.at(0).at(0)));  // SQLite's printf gives NULL
  QueryResult rows = execute_readonly(path, "SELECT printf('%.*c', 400, 'x') FROM stadium", options);
  ASSERT_TRUE(rows.ok()) << rows.error->message;
  EXPECT_EQ(rows.rows.size(), 2u);
  EXPECT_TRUE(rows.truncated);
}
