#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include "relmem/catalog/executor.hpp"
#include "test_util.hpp"

// The functions relmem puts in place of SQLite's own give SQLite's answers: each statement runs on a connection
// from open_readonly (the replacements) and on a plain one (the built-ins), with the same bound arguments.
namespace {

using Connection = std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)>;

// Every column of the statement's one row as "<type>:<bytes>", errors as "error:<message>".
std::string run(sqlite3* db, const std::string& sql, const std::vector<std::string>& texts) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) return "prepare:" + std::string(sqlite3_errmsg(db));
  for (size_t i = 0; i < texts.size(); ++i)
    sqlite3_bind_text64(stmt, static_cast<int>(i + 1), texts[i].data(), texts[i].size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt, c));
      out += std::to_string(sqlite3_column_type(stmt, c)) + ":" +
             std::string(bytes ? bytes : "", static_cast<size_t>(sqlite3_column_bytes(stmt, c))) + "|";
    }
  } else {
    out = "error:" + std::string(sqlite3_errmsg(db));
  }
  sqlite3_finalize(stmt);
  return out;
}

class ReplacedFunctions : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("empty.sqlite"), "CREATE TABLE t (x);");
    replaced.reset(relmem::open_readonly(dir.file("empty.sqlite")));
    sqlite3* raw = nullptr;
    sqlite3_open(":memory:", &raw);
    builtin.reset(raw);
    ASSERT_TRUE(replaced && builtin);
  }
  void ExpectSame(const std::string& sql, const std::vector<std::string>& texts = {}) {
    EXPECT_EQ(run(replaced.get(), sql, texts), run(builtin.get(), sql, texts)) << sql;
  }
  relmem_test::TempDir dir;
  Connection replaced{nullptr, &sqlite3_close_v2};
  Connection builtin{nullptr, &sqlite3_close_v2};
};

// Random texts over bytes that make valid and invalid UTF-8 (lead bytes, stray continuation bytes) and sets drawn
// from the same bytes, so that characters of different lengths compete at one place.
TEST_F(ReplacedFunctions, TrimMatchesSqliteOnRandomBytes) {
  const std::string alphabet = std::string("ab ") + "\xC3\xA9\x80\xE2\x82\xAC\xF0\x9F\xBF";
  std::mt19937 random(7);
  auto draw = [&](size_t max_length) {
    std::string s(random() % (max_length + 1), ' ');
    for (char& c : s) c = alphabet[random() % alphabet.size()];
    return s;
  };
  for (int i = 0; i < 3000; ++i) {
    const std::vector<std::string> args = {draw(12), draw(6)};
    ExpectSame("SELECT trim(?1, ?2), ltrim(?1, ?2), rtrim(?1, ?2), trim(?1), ltrim(?1), rtrim(?1)", args);
  }
}

TEST_F(ReplacedFunctions, TrimKeepsSqlitesTypesAndNulls) {
  ExpectSame("SELECT trim(NULL), trim('a', NULL), trim(NULL, 'a'), trim(12, 1), trim(x'2041', ' '), trim('abc', '')");
  ExpectSame("SELECT ltrim(3.5, '3'), rtrim(' x ', ''), typeof(trim(x'00')), length(trim(CAST(x'610062' AS TEXT), 'a'))");
}

TEST_F(ReplacedFunctions, CheckedJsonAndDateFunctionsGiveSqlitesAnswers) {
  ExpectSame("SELECT json_patch('{\"a\":1,\"b\":{\"c\":2}}', '{\"b\":{\"c\":null,\"d\":[1]},\"e\":3}')");
  ExpectSame("SELECT json_patch(NULL, '{}'), json_patch('{}', NULL), json_patch('[1]', '{\"a\":1}')");
  ExpectSame("SELECT json_patch('{', '{}')");
  ExpectSame("SELECT json_array(json_patch('{}', '{\"a\":1}')), json_type(json_patch('{}', '{\"a\":1}'))");
  ExpectSame("SELECT json_set('{\"a\":1}', '$.b', json('[1,2]'), '$.c', '[3]'), json_insert('[1]', '$[#]', 2)");
  ExpectSame("SELECT json_set('{}'), json_set('x', '$.a', 1)");
  ExpectSame("SELECT json_insert('{\"a\":1}', '$.a', 2, '$.b', json_object('c', 3)), json_set('[]', '$[0]', NULL)");
  ExpectSame("SELECT json_array(json_set('{}', '$.a', 1)), json_set('{}', 'a', 1)");
  ExpectSame("SELECT strftime('%Y-%m-%d %H:%M:%f %j %J %s %w', '2020-05-06 07:08:09.5', '+1 day'), strftime('%Y'), "
             "strftime(NULL), strftime('%Y', NULL), strftime('%s', 1700000000, 'unixepoch')");
}

}  // namespace
