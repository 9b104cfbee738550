#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "child_query.hpp"
#include "test_util.hpp"

// Every built-in SQL function the read-only connection allows, called with adversarial arguments
// (tests/fixtures/adversarial_functions.tsv): each call ends within its 1 s time limit plus 2 s, under 1.5 GB,
// with the outcome its line expects.
namespace {

constexpr double kTimeLimit = 1.0;
constexpr double kSlack = 2.0;
constexpr int64_t kMaxMemoryBytes = int64_t{1536} << 20;

struct AdversarialCall {
  std::string function;
  std::string expected;
  std::string sql;
};

void PrintTo(const AdversarialCall& call, std::ostream* out) { *out << call.function << ": " << call.sql.substr(0, 60); }

// R(N): N bytes 0x80 as text, built inside SQLite (SQL text itself must be UTF-8).
std::string expand_runs(const std::string& sql) {
  static const std::regex run(R"(R\((\d+)\))");
  return std::regex_replace(sql, run, "replace(CAST(zeroblob($1) AS TEXT), CAST(X'00' AS TEXT), X'80')");
}

std::vector<AdversarialCall> load_calls() {
  std::ifstream in(std::string(RELMEM_SOURCE_DIR) + "/tests/fixtures/adversarial_functions.tsv");
  std::vector<AdversarialCall> calls;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t first = line.find('\t'), second = line.find('\t', first + 1);
    calls.push_back({line.substr(0, first), line.substr(first + 1, second - first - 1), expand_runs(line.substr(second + 1))});
  }
  return calls;
}

void expect_outcome(const std::string& expected, const std::string& outcome) {
  if (expected == "done") {
    EXPECT_TRUE(outcome.rfind("ok:", 0) == 0 || outcome.rfind("timeout:", 0) == 0) << outcome;
  } else if (expected == "ok") {
    EXPECT_EQ(outcome.rfind("ok:", 0), 0u) << outcome;
  } else if (expected.rfind("ok:", 0) == 0) {
    EXPECT_EQ(outcome, expected);
  } else if (expected == "timeout") {
    EXPECT_EQ(outcome.rfind("timeout:", 0), 0u) << outcome;
  } else if (expected.rfind("refused", 0) == 0) {  // "refused", or "refused: <words of the reason>"
    EXPECT_EQ(outcome.rfind("refused:", 0), 0u) << outcome.substr(0, 200);
    if (expected.size() > 9) EXPECT_NE(outcome.find(expected.substr(9)), std::string::npos) << outcome.substr(0, 200);
  } else {
    ASSERT_EQ(expected.rfind("error:", 0), 0u) << "unknown expectation " << expected;
    EXPECT_EQ(outcome.rfind("runtime:", 0), 0u) << outcome;
    EXPECT_NE(outcome.find(expected.substr(6)), std::string::npos) << outcome;
  }
}

// Runs `sql` on the database at `path` in a child process: no signal, within the time limit plus slack and the
// memory bound, and the expected outcome (see expect_outcome).
void expect_call(const std::string& path, const std::string& sql, const std::string& expected) {
  const relmem_test::ChildQuery child = relmem_test::run_query_in_child(path, sql, kTimeLimit);
  const std::string call = sql.substr(0, 80) + " ... " + sql.substr(sql.size() - std::min<size_t>(sql.size(), 40));
  EXPECT_EQ(child.signal, 0) << call;
  EXPECT_LT(child.seconds, kTimeLimit + kSlack) << call << " -> " << child.outcome.substr(0, 200);
  EXPECT_LT(child.max_rss_bytes, kMaxMemoryBytes) << call;
  SCOPED_TRACE(call);
  expect_outcome(expected, child.outcome);
}

class FunctionTimeLimit : public ::testing::TestWithParam<AdversarialCall> {
 protected:
  static void SetUpTestSuite() {
    dir = new relmem_test::TempDir();
    relmem_test::make_database(dir->file("empty.sqlite"), "CREATE TABLE t (x);");
  }
  static void TearDownTestSuite() { delete dir; }
  static relmem_test::TempDir* dir;
};
relmem_test::TempDir* FunctionTimeLimit::dir = nullptr;

TEST_P(FunctionTimeLimit, EndsWithinTheLimitPlusSlack) {
  expect_call(dir->file("empty.sqlite"), GetParam().sql, GetParam().expected);
}

std::string call_name(const ::testing::TestParamInfo<AdversarialCall>& info) {
  std::string name = std::to_string(info.index) + "_";
  for (char c : info.param.function) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(AdversarialCalls, FunctionTimeLimit, ::testing::ValuesIn(load_calls()), call_name);

// Full-text search functions exist only on a database with FTS tables: one FTS5 and one FTS4 table holding a
// 200,000-word document of 5,000 distinct words.
TEST(FullTextFunctionTimeLimit, SnippetIsRefusedTheOthersEndWithinTheLimitPlusSlack) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("fts.sqlite");
  relmem_test::make_database(path, R"sql(
    CREATE VIRTUAL TABLE f5 USING fts5(body);
    CREATE VIRTUAL TABLE f4 USING fts4(body);
    WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 199999)
    INSERT INTO f5 SELECT group_concat('w' || (i % 5000), ' ') FROM k;
    INSERT INTO f4 SELECT body FROM f5;)sql");
  // 500 terms; 16 terms, 31 tokens with the ORs; 8 terms, 15 tokens
  std::string many_terms, most_fts5_terms, most_fts4_terms;
  for (int i = 0; i < 500; ++i) many_terms += (i ? " OR w" : "w") + std::to_string(i);
  for (int i = 0; i < 16; ++i) most_fts5_terms += (i ? " OR w" : "w") + std::to_string(i);
  for (int i = 0; i < 8; ++i) most_fts4_terms += (i ? " OR w" : "w") + std::to_string(i);
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"SELECT length(snippet(f5, 0, '[', ']', '...', 64)) FROM f5 WHERE f5 MATCH 'w1'", "refused"},
      {"SELECT length(snippet(f4)) FROM f4 WHERE f4 MATCH 'w1'", "refused"},
      {"SELECT length(highlight(f5, 0, '[', ']')) FROM f5 WHERE f5 MATCH '" + most_fts5_terms + "'", "done"},
      {"SELECT bm25(f5) FROM f5 WHERE f5 MATCH '" + most_fts5_terms + "'", "done"},
      {"SELECT bm25(f5) FROM f5 WHERE f5 MATCH '" + many_terms + "'", "refused"},
      {"SELECT length(offsets(f4)) FROM f4 WHERE f4 MATCH '" + most_fts4_terms + "'", "done"},
      {"SELECT length(matchinfo(f4, 'pcnalxy')) FROM f4 WHERE f4 MATCH '" + most_fts4_terms + "'", "done"},
      {"SELECT length(offsets(f4)) FROM f4 WHERE f4 MATCH '" + many_terms + "'", "refused"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH 'NEAR(w1 w2 w3 w4 w5 w6 w7 w8, 100000)'", "done"},
  };
  for (const auto& [sql, expected] : calls) expect_call(path, sql, expected);
}

// FTS3/4 and FTS5 match a phrase against one document inside one step, reading each token's positions: a phrase of
// 128 words over a document of 1,000,000 equal words runs for seconds there. Query strings over kMaxFts5QueryTokens
// (kMaxFts4QueryTokens) tokens are refused, and so are query strings the SQL computes, however they reach the table (a view over an
// FTS5 table is refused by SQLite itself on a connection that does not trust the schema).
TEST(FullTextFunctionTimeLimit, LongPhrasesAreRefusedAndTheLongestAllowedEndWithinTheLimitPlusSlack) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("fts.sqlite");
  std::string phrase;
  for (int i = 0; i < 20000; ++i) phrase += i ? " a" : "a";
  relmem_test::make_database(path, R"sql(
    CREATE VIRTUAL TABLE f5 USING fts5(body);
    WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 999999)
    INSERT INTO f5 SELECT group_concat('a', ' ') FROM k;
    CREATE VIRTUAL TABLE f4 USING fts4(body);
    INSERT INTO f4 SELECT body FROM f5;
    CREATE TABLE queries (q TEXT);
    INSERT INTO queries VALUES ('")sql" + phrase + R"sql("');)sql");
  // 128 tokens load before the time limit and then take seconds in one step (20,000 are still loading when the
  // limit stops them); 32 is the most FTS5 allows, 16 the most FTS3/4 allow.
  std::string loaded_in_time, longest_allowed;
  for (int i = 0; i < 128; ++i) loaded_in_time += i ? " a" : "a";
  for (int i = 0; i < 32; ++i) longest_allowed += i ? " a" : "a";
  const std::string computed = "replace(hex(zeroblob(20000)), '00', 'a ')";
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"SELECT count(*) FROM f5 WHERE f5 MATCH '\"" + phrase + "\"'", "refused: at most 32 tokens"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH '\"" + loaded_in_time + "\"'", "refused: at most 32 tokens"},
      {"SELECT count(*) FROM f5('\"" + phrase + "\"')", "refused: at most 32 tokens"},
      {"SELECT count(*) FROM f5 WHERE f5 = '\"" + phrase + "\"'", "refused: at most 32 tokens"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH 'NEAR(" + phrase + ")'", "refused: at most 32 tokens"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH '\"' || " + computed + " || '\"'", "refused: is computed"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH coalesce(NULL, '\"' || " + computed + " || '\"', 'a')", "refused: is computed"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH CASE WHEN random() THEN (SELECT q FROM queries) ELSE 'a' END",
       "refused: is computed"},
      {"SELECT count(*) FROM queries, f5 WHERE f5 MATCH queries.q", "refused: is computed"},
      {"SELECT count(*) FROM f5 WHERE f5 MATCH '\"" + longest_allowed + "\"'", "done"},
      {"SELECT count(*) FROM f4 WHERE f4 MATCH '\"" + phrase + "\"'", "refused: at most 16 tokens"},
      {"SELECT count(*) FROM f4 WHERE f4 MATCH '\"" + loaded_in_time + "\"'", "refused: at most 16 tokens"},
      {"SELECT count(*) FROM f4 WHERE f4 MATCH '\"" + longest_allowed + "\"'", "refused: at most 16 tokens"},
      {"SELECT count(*) FROM f4 WHERE body MATCH '\"' || " + computed + " || '\"'", "refused: is computed"},
      {"SELECT count(*) FROM f4 WHERE f4 MATCH '\"" + longest_allowed.substr(0, 31) + "\"'", "done"},
  };
  for (const auto& [sql, expected] : calls) expect_call(path, sql, expected);
}

}  // namespace
