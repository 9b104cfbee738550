// Virtual columns and relations: lazy and whole-table filling, reuse, references, read-only guarantees.
#include "hybrid_fixture.hpp"
#include "relmem/llm/callable_llm.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

TEST_F(HybridFixture, LazyFillsOnlyTheRowsTheQueryReaches) {
  auto oracle_llm = oracle();
  auto s = session(filler(oracle_llm));
  const auto out = s->execute("SELECT nationality FROM superhero WHERE superhero_name = 'Hero 3'");
  EXPECT_EQ(cell(out.result), "German");
  EXPECT_EQ(out.stats.rounds, 2);
  EXPECT_EQ(out.stats.fills.items, 1);
  EXPECT_EQ(out.stats.fills.requests, 1);
  EXPECT_EQ(oracle_llm->calls(), 1);

  // Ordinary predicates run first: only heroes taller than 200 cm are asked about.
  const auto tall = s->execute("SELECT COUNT(*) FROM superhero WHERE height_cm > 200 AND nationality = 'British'");
  EXPECT_EQ(tall.stats.fills.items, 10);
  EXPECT_EQ(cell(tall.result), "3");  // heroes 52, 55, 58
}

TEST_F(HybridFixture, LazyAsksOnlyForTheColumnsTheQueryReads) {
  auto s = session(filler(oracle()));
  const auto out = s->execute("SELECT COUNT(*) FROM superhero WHERE nationality = 'German'");
  EXPECT_EQ(cell(out.result), "20");
  ASSERT_EQ(out.stats.requests.size(), 1u);
  EXPECT_EQ(out.stats.requests[0]["answers"], json::array({"nationality"}));  // not the eye colour
  EXPECT_EQ(out.stats.fills.items, kHeroes);

  // A second virtual predicate is read only where the first held: the eye colour of the 20 German heroes.
  const auto both = s->execute(
      "SELECT COUNT(*) FROM superhero s JOIN colour c ON c.id = s.eye_colour_id "
      "WHERE s.nationality = 'German' AND c.colour = 'Blue'");
  EXPECT_EQ(both.stats.fills.items, 20);
  EXPECT_EQ(cell(both.result), "20");  // heroes 3, 6, ...: eye colour 1 + i % 3 = 1, Blue
}

TEST_F(HybridFixture, LazySendsAReachedRowOnceForEveryVirtualColumnTheQueryReads) {
  auto s = session(filler(oracle()));
  // Round 1 reads the nationality of every hero (unfilled: NULL, so the eye colour is never reached); the query
  // also reads the eye colour, so each hero's key travels once with both columns instead of once per column.
  const auto out = s->execute(
      "SELECT COUNT(*) FROM superhero s JOIN colour c ON c.id = s.eye_colour_id "
      "WHERE s.nationality = 'German' AND c.colour = 'Blue'");
  EXPECT_EQ(cell(out.result), "20");
  EXPECT_EQ(out.stats.rounds, 2);
  ASSERT_EQ(out.stats.requests.size(), 1u);
  EXPECT_EQ(out.stats.requests[0]["answers"], json::array({"eye_colour_id", "nationality"}));
  EXPECT_EQ(out.stats.fills.items, kHeroes);
  EXPECT_EQ(out.stats.fills.requests, 2);  // 40 rows per request
}

TEST_F(HybridFixture, PrefillFillsTheGivenRowsOnce) {
  auto s = session(filler(oracle()));
  const std::vector<json> keys = {{{"superhero_name", "Hero 3"}}, {{"superhero_name", "Hero 4"}}};
  auto report = s->prefill("superhero", keys, {"nationality", "eye_colour_id"});
  EXPECT_EQ(report.items, 2);
  EXPECT_EQ(report.values, 4);
  EXPECT_EQ(report.requests, 1);
  EXPECT_EQ(s->prefill("superhero", keys, {"nationality"}).requests, 0);  // stored already
  EXPECT_EQ(s->prefill("hero_power", keys, {}).items, 2);
  const auto out = s->execute("SELECT nationality FROM superhero WHERE superhero_name = 'Hero 3'");
  EXPECT_EQ(cell(out.result), "German");
  EXPECT_EQ(out.stats.fills.requests, 0);
  EXPECT_THROW(s->prefill("villains", keys, {}), Error);
  EXPECT_THROW(s->prefill("superhero", keys, {"height"}), Error);
  EXPECT_THROW(s->prefill("superhero", {{{"name", "Hero 3"}}}, {"nationality"}), Error);
}

TEST_F(HybridFixture, WholeModeFillsEveryRowOfATouchedColumn) {
  auto s = session(filler(oracle()), FillMode::Whole);
  const auto out = s->execute("SELECT nationality FROM superhero WHERE superhero_name = 'Hero 3'");
  EXPECT_EQ(cell(out.result), "German");
  EXPECT_EQ(out.stats.fills.items, kHeroes);
  EXPECT_EQ(out.stats.fills.requests, 2);  // 40 rows per request
}

TEST_F(HybridFixture, FillAllIsHqdlsBaseline) {
  auto s = session(filler(oracle()));
  const auto report = s->fill_all();
  EXPECT_EQ(report.items, 2 * kHeroes);  // both columns of each row together, and the relation
  EXPECT_EQ(report.requests, 4);
  const auto out = s->execute("SELECT COUNT(*) FROM superhero WHERE nationality = 'French'");
  EXPECT_EQ(cell(out.result), "20");
  EXPECT_EQ(out.stats.fills.requests, 0);
}

TEST_F(HybridFixture, ReferencesJoinToStoredLabelsAndRelationsToTargets) {
  auto s = session(filler(oracle()));
  auto out = s->execute(
      "SELECT COUNT(*) FROM superhero AS T1 JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T2.colour = 'Blue'");
  EXPECT_EQ(cell(out.result), "20");
  out = s->execute(
      "SELECT T3.power_name FROM superhero T1 JOIN hero_power T2 ON T1.id = T2.hero_id JOIN superpower T3 "
      "ON T2.power_id = T3.id WHERE T1.superhero_name = 'Hero 4' ORDER BY 1");
  ASSERT_TRUE(out.result.ok()) << out.result.error->message;
  ASSERT_EQ(out.result.rows.size(), 2u);
  EXPECT_EQ(cell(out.result, 0), "Agility");
  EXPECT_EQ(cell(out.result, 1), "Super Strength");
  EXPECT_EQ(out.stats.by_kind.at("list").items, 1);  // only Hero 4's powers were listed
}

TEST_F(HybridFixture, ASecondSessionOnTheSameStorePaysNoTokens) {
  const std::string sql = "SELECT superhero_name FROM superhero WHERE nationality = 'German' ORDER BY id LIMIT 3";
  {
    auto s = session(filler(oracle()));
    EXPECT_EQ(cell(s->execute(sql).result, 2), "Hero 9");
  }
  const auto tokens_before = ledger_->total().total_tokens();
  auto s = session(filler(oracle()));
  const auto out = s->execute(sql);
  EXPECT_EQ(cell(out.result, 2), "Hero 9");
  EXPECT_EQ(out.stats.fills.requests, 0);
  EXPECT_EQ(ledger_->total().total_tokens(), tokens_before);
}

TEST_F(HybridFixture, GeneratedSqlStaysReadOnlyAndTheDatabaseIsNeverWritten) {
  const std::string before = file_bytes(curated_);
  auto s = session(filler(oracle()));
  EXPECT_EQ(s->execute("SELECT nationality FROM superhero").result.rows.size(), static_cast<size_t>(kHeroes));
  for (const std::string sql : {"ATTACH DATABASE 'x.sqlite' AS x", "INSERT INTO superhero (id) VALUES (999)",
                                "DROP TABLE temp.superhero", "PRAGMA writable_schema = 1",
                                "SELECT load_extension('x')", "CREATE TEMP TABLE t (x)"}) {
    const auto out = s->execute(sql);
    ASSERT_FALSE(out.result.ok()) << sql;
    EXPECT_EQ(out.result.error->kind, SqlErrorKind::Refused) << sql << ": " << out.result.error->message;
  }
  EXPECT_EQ(file_bytes(curated_), before);
  EXPECT_EQ(cell(s->execute("SELECT COUNT(*) FROM superhero").result), std::to_string(kHeroes));
}

TEST_F(HybridFixture, DeclarationErrorsAreClear) {
  auto schema = hero_schema();
  schema.tables[0].table = "villains";
  EXPECT_THROW(session(filler(oracle()), FillMode::Lazy, schema), Error);
  schema = hero_schema();
  schema.tables[0].columns[1].name = "height_cm";  // already stored
  EXPECT_THROW(session(filler(oracle()), FillMode::Lazy, schema), Error);
  EXPECT_THROW(HybridSession("heroes", (folder_ / "absent.sqlite").string(), hero_schema(), filler(oracle())), Error);
}

TEST_F(HybridFixture, KeysAreCompletedUntilTheyIdentifyEveryRow) {
  run_sql(curated_, "INSERT INTO superhero VALUES (1001, 'Hero 1', 199)");  // a second 'Hero 1'
  auto s = session(filler(oracle()));
  EXPECT_EQ(s->schema().tables[0].key_columns, (std::vector<std::string>{"superhero_name", "height_cm"}));
}

TEST_F(HybridFixture, ValueTablesRestoreADroppedDimension) {
  HybridSchema schema;
  schema.value_tables.push_back({"alignment", "id", "alignment", {"Good", "Bad"}});
  VirtualTable heroes{"superhero", {"superhero_name"}, {}};
  heroes.columns.push_back({"alignment_id", FillType::Integer, "whether the hero is good or bad", {},
                            Reference{"alignment", "id", "alignment"}});
  schema.tables.push_back(heroes);
  auto llm = std::make_shared<CallableLLM>(
      [](const std::vector<ChatMessage>& messages, const ChatParams&) {
        json reply = json::object();
        for (int i = 1; i <= 40; ++i) reply[std::to_string(i)] = {{"alignment_id", i % 2 ? "bad" : "Good"}};
        return ChatResponse{reply.dump(), estimate_usage(messages, reply.dump()), "stop", false};
      },
      "alternating");
  auto s = session(filler(llm), FillMode::Lazy, schema);
  const auto out = s->execute(
      "SELECT COUNT(*) FROM superhero T1 JOIN alignment T2 ON T2.id = T1.alignment_id WHERE T2.alignment = 'Bad'");
  EXPECT_EQ(cell(out.result), std::to_string(kHeroes / 2));
}

TEST_F(HybridFixture, KeyedRowsTravelCompactlyAndOneColumnIsAnsweredBare) {
  auto seen = std::make_shared<json>();
  auto llm = std::make_shared<CallableLLM>(
      [seen](const std::vector<ChatMessage>& messages, const ChatParams&) {
        const std::string& user = messages.back().content;
        *seen = json::parse(user.substr(user.find("<request>") + 10,
                                        user.rfind("</request>") - user.find("<request>") - 10));
        json reply = json::object();
        for (const auto& row : (*seen)["rows"]) reply[row[0].dump()] = row[1].get<std::string>() + " land";
        return ChatResponse{reply.dump(), estimate_usage(messages, reply.dump()), "stop", false};
      },
      "bare");
  auto s = session(filler(llm));
  const auto out = s->execute("SELECT nationality FROM superhero WHERE superhero_name = 'Hero 7'");
  EXPECT_EQ(cell(out.result), "Hero 7 land");
  EXPECT_EQ((*seen)["key_columns"], json::array({"superhero_name"}));
  EXPECT_EQ((*seen)["rows"], json::parse(R"([[1, "Hero 7"]])"));
  EXPECT_FALSE(seen->contains("items"));
}

}  // namespace
}  // namespace relmem::hybrid
