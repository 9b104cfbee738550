// Spider's gold queries: every one parses and renders to a fixed point; re-rendered and self-rewritten queries return
// the gold rows (the dev set and every 10th train query, leaving out the few that run longer than half a second;
// all of them with RELMEM_SPIDER_FULL=1); the detector raises error-level diagnostics only on queries that SQLite
// itself rejects; the qualifier and join repairs change none of them, the count repair only four that count one row
// per group.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "relmem/catalog/catalog.hpp"
#include "relmem/common.hpp"
#include "relmem/sql/inspector.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/repair.hpp"
#include "relmem/sql/rewrite.hpp"

using namespace relmem::sql;
namespace fs = std::filesystem;

namespace {

const std::string kSpider = RELMEM_SOURCE_DIR "/../shared/data/spider";

struct GoldQuery {
  std::string db;
  std::string sql;
};

std::vector<GoldQuery> load_json(const std::string& name) {
  std::ifstream in(kSpider + "/" + name);
  std::vector<GoldQuery> queries;
  for (const auto& item : nlohmann::json::parse(in)) {
    queries.push_back({item.at("db_id").get<std::string>(), item.at("query").get<std::string>()});
  }
  return queries;
}

// Lines of "<sql>\t<db>".
std::vector<GoldQuery> load_gold_sql(const std::string& name) {
  std::ifstream in(kSpider + "/" + name);
  std::vector<GoldQuery> queries;
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.rfind('\t');
    if (tab != std::string::npos) queries.push_back({line.substr(tab + 1), line.substr(0, tab)});
  }
  return queries;
}

std::string database_path(const std::string& db) { return kSpider + "/database/" + db + "/" + db + ".sqlite"; }

// Each literal replaced by its own value, written afresh (double-quoted values become single-quoted).
std::string rewrite_to_itself(const std::string& sql) {
  Select select = parse(sql);
  std::map<int, LiteralValue> same;
  for (const Expr* literal : literals(select)) {
    if (literal->literal_kind == LiteralKind::String) {
      same.emplace(literal->literal_index, LiteralValue::string(literal->value));
    } else if (literal->literal_kind == LiteralKind::Number) {
      same.emplace(literal->literal_index, LiteralValue::number(literal->value));
    } else if (literal->literal_kind == LiteralKind::Null) {
      same.emplace(literal->literal_index, LiteralValue::null());
    }
  }
  return rewrite_literals(sql, same);
}

bool same_value(const relmem::Value& a, const relmem::Value& b) {
  if (a.index() != b.index()) return false;
  if (auto* blob = std::get_if<relmem::Blob>(&a)) return blob->bytes == std::get<relmem::Blob>(b).bytes;
  return relmem::value_to_string(a) == relmem::value_to_string(b);
}

bool same_rows(const relmem::QueryResult& a, const relmem::QueryResult& b) {
  if (a.rows.size() != b.rows.size() || a.columns.size() != b.columns.size()) return false;
  for (size_t r = 0; r < a.rows.size(); ++r) {
    for (size_t c = 0; c < a.rows[r].size(); ++c) {
      if (!same_value(a.rows[r][c], b.rows[r][c])) return false;
    }
  }
  return true;
}

bool has_error(const std::vector<Diagnostic>& diagnostics) {
  for (const Diagnostic& diagnostic : diagnostics) {
    if (diagnostic.severity == Severity::Error) return true;
  }
  return false;
}

class SpiderGold : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kSpider + "/dev.json") || !fs::exists(kSpider + "/train_spider.json")) {
      GTEST_SKIP() << "Spider data not found under " << kSpider;
    }
  }

  const relmem::Schema& schema(const std::string& db) {
    auto it = schemas_.find(db);
    if (it == schemas_.end()) it = schemas_.emplace(db, relmem::read_schema(database_path(db))).first;
    return it->second;
  }

  std::vector<GoldQuery> executable(const std::vector<GoldQuery>& queries) {
    std::vector<GoldQuery> kept;
    for (const GoldQuery& query : queries) {
      if (fs::exists(database_path(query.db))) kept.push_back(query);
    }
    return kept;
  }

  std::map<std::string, relmem::Schema> schemas_;
};

}  // namespace

TEST_F(SpiderGold, EveryGoldQueryParsesAndRendersToAFixedPoint) {
  std::vector<std::vector<GoldQuery>> sets = {load_json("dev.json"), load_json("train_spider.json"),
                                              load_gold_sql("dev_gold.sql"), load_gold_sql("train_gold.sql")};
  ASSERT_EQ(sets[0].size(), 1034u);
  ASSERT_EQ(sets[1].size(), 7000u);
  size_t parsed = 0;
  for (const auto& set : sets) {
    for (const GoldQuery& query : set) {
      try {
        std::string once = render(parse(query.sql));
        EXPECT_EQ(render(parse(once)), once) << query.sql;
        EXPECT_NO_THROW(parse(rewrite_to_itself(query.sql))) << query.sql;
        ++parsed;
      } catch (const relmem::Error& error) {
        ADD_FAILURE() << query.db << ": " << query.sql << "\n" << error.what();
      }
    }
  }
  EXPECT_EQ(parsed, sets[0].size() + sets[1].size() + sets[2].size() + sets[3].size());
}

TEST_F(SpiderGold, RenderedAndRewrittenQueriesReturnTheGoldRows) {
  bool full = std::getenv("RELMEM_SPIDER_FULL") != nullptr;
  std::vector<GoldQuery> queries = executable(load_json("dev.json"));
  std::vector<GoldQuery> train = executable(load_json("train_spider.json"));
  for (size_t i = 0; i < train.size(); ++i) {
    if (full || i % 10 == 0) queries.push_back(train[i]);
  }
  relmem::ExecOptions gold_options;
  gold_options.timeout_seconds = full ? 120.0 : 0.5;
  size_t compared = 0;
  for (const GoldQuery& query : queries) {
    std::string path = database_path(query.db);
    relmem::QueryResult gold = relmem::execute_readonly(path, query.sql, gold_options);
    // A few gold queries are not valid SQLite (the next test covers them); slow ones wait for the full run.
    if (!gold.ok()) continue;
    ++compared;
    relmem::ExecOptions options;
    options.timeout_seconds = 120.0;  // generous: a loaded machine must not turn a slow query into a mismatch
    std::string rendered = render(parse(query.sql));
    relmem::QueryResult again = relmem::execute_readonly(path, rendered, options);
    EXPECT_TRUE(again.ok() && same_rows(gold, again)) << query.db << ": " << query.sql << "\nrendered: " << rendered;
    std::string rewritten = rewrite_to_itself(query.sql);
    relmem::QueryResult same = relmem::execute_readonly(path, rewritten, options);
    EXPECT_TRUE(same.ok() && same_rows(gold, same)) << query.db << ": " << query.sql << "\nrewritten: " << rewritten;
  }
  EXPECT_GT(compared, 1000u);
  std::cout << "compared rows of " << compared << " gold queries\n";
}

TEST_F(SpiderGold, ErrorDiagnosticsOnlyOnQueriesSqliteRejects) {
  std::vector<GoldQuery> queries = executable(load_json("dev.json"));
  for (const GoldQuery& query : executable(load_json("train_spider.json"))) queries.push_back(query);
  std::map<std::string, int> queries_per_kind;
  size_t flagged = 0;
  for (const GoldQuery& query : queries) {
    std::vector<Diagnostic> diagnostics = inspect(query.sql, schema(query.db));
    std::set<std::string> kinds;
    for (const Diagnostic& diagnostic : diagnostics) kinds.insert(kind_name(diagnostic.kind));
    for (const std::string& kind : kinds) ++queries_per_kind[kind];
    if (!has_error(diagnostics)) continue;
    ++flagged;
    EXPECT_FALSE(relmem::execute_readonly(database_path(query.db), query.sql).ok())
        << "false alarm on " << query.db << ": " << query.sql << "\n" << diagnostics.front().message;
  }
  std::cout << "gold queries inspected: " << queries.size() << ", with an error: " << flagged << "\n";
  for (const auto& [kind, count] : queries_per_kind) std::cout << "  " << kind << ": " << count << "\n";
}

TEST_F(SpiderGold, QualifierRepairChangesNoGoldQuery) {
  std::vector<GoldQuery> queries = executable(load_json("dev.json"));
  for (const GoldQuery& query : executable(load_json("train_spider.json"))) queries.push_back(query);
  for (const GoldQuery& query : queries) {
    QualifierRepair repair = repair_qualifiers(query.sql, schema(query.db));
    EXPECT_TRUE(repair.repairs.empty()) << query.db << ": " << query.sql << "\nrepaired: " << repair.sql;
    EXPECT_EQ(repair.sql, query.sql);
  }
  EXPECT_GT(queries.size(), 7000u);
}

TEST_F(SpiderGold, JoinRepairChangesNoGoldQuery) {
  std::vector<GoldQuery> queries = executable(load_json("dev.json"));
  for (const GoldQuery& query : executable(load_json("train_spider.json"))) queries.push_back(query);
  for (const GoldQuery& query : queries) {
    JoinRepair repair = repair_joins(query.sql, schema(query.db));
    EXPECT_TRUE(repair.repairs.empty()) << query.db << ": " << query.sql << "\nrepaired: " << repair.sql;
    EXPECT_EQ(repair.sql, query.sql);
  }
  EXPECT_GT(queries.size(), 7000u);
}

TEST_F(SpiderGold, CountRepairChangesOnlyGoldQueriesThatCountOneRowPerDepartment) {
  // Four train queries of hospital_1 group department by its key and rank by count(departmentID), one per group,
  // for "the department with the most employees"; the repair counts Affiliated_With, the table that references it.
  std::vector<GoldQuery> queries = executable(load_json("dev.json"));
  for (const GoldQuery& query : executable(load_json("train_spider.json"))) queries.push_back(query);
  size_t changed = 0;
  for (const GoldQuery& query : queries) {
    CountRepair repair = repair_counts(query.sql, schema(query.db));
    if (repair.repairs.empty()) {
      EXPECT_EQ(repair.sql, query.sql);
      continue;
    }
    ++changed;
    EXPECT_EQ(query.db, "hospital_1") << query.sql;
    EXPECT_NE(query.sql.find("FROM department GROUP BY departmentID ORDER BY count(departmentID)"), std::string::npos)
        << query.sql;
    EXPECT_EQ(repair.repairs[0].table, "Affiliated_With");
  }
  EXPECT_EQ(changed, 4u);
  EXPECT_GT(queries.size(), 7000u);
}
