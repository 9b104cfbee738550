// LLM functions inside SQL, and the oracle filler that answers them from the original database.
#include <atomic>

#include "hybrid_fixture.hpp"
#include "relmem/llm/callable_llm.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

// Answers every item of a map/qa request with a text derived from its input, and counts items.
std::shared_ptr<CallableLLM> echo(std::shared_ptr<std::atomic<int>> items) {
  return std::make_shared<CallableLLM>(
      [items](const std::vector<ChatMessage>& messages, const ChatParams&) {
        const std::string& user = messages.back().content;
        const auto payload = json::parse(user.substr(user.find("<request>") + 10,
                                                     user.rfind("</request>") - user.find("<request>") - 10));
        json reply = json::object();
        for (const auto& item : payload["items"]) {
          ++*items;
          reply[std::to_string(item["id"].get<int>())] = "seen " + item["input"].dump();
        }
        return ChatResponse{reply.dump(), estimate_usage(messages, reply.dump()), "stop", false};
      },
      "echo");
}

TEST_F(HybridFixture, LlmMapAsksOncePerDistinctInput) {
  auto items = std::make_shared<std::atomic<int>>(0);
  auto s = session(filler(echo(items)));
  const auto out = s->execute(
      "SELECT llm_map('Which group?', height_cm % 3) AS g, COUNT(*) FROM superhero GROUP BY g ORDER BY g");
  ASSERT_TRUE(out.result.ok()) << out.result.error->message;
  ASSERT_EQ(out.result.rows.size(), 3u);
  EXPECT_EQ(cell(out.result, 0, 0), "seen 0");
  EXPECT_EQ(cell(out.result, 0, 1), "20");
  EXPECT_EQ(*items, 3);
  EXPECT_EQ(out.stats.by_kind.at("map").items, 3);
  EXPECT_EQ(ledger_->by_stage().at("hybrid_map").calls, 1);
}

TEST_F(HybridFixture, FunctionsGivenNullsAnswerNullWithoutAsking) {
  auto items = std::make_shared<std::atomic<int>>(0);
  auto s = session(filler(echo(items)));
  auto out = s->execute("SELECT llm_map('x', NULL), llm_map(NULL, 'a'), llm_map_in('x', NULL, NULL, NULL)");
  ASSERT_TRUE(out.result.ok()) << out.result.error->message;
  for (const auto& v : out.result.rows[0]) EXPECT_TRUE(std::holds_alternative<std::monostate>(v));
  out = s->execute("SELECT llm_qa('Sum up', NULL) FROM superhero");
  EXPECT_EQ(cell(out.result), "NULL");
  EXPECT_EQ(*items, 0);
  out = s->execute("SELECT llm_map('only an instruction')");
  ASSERT_FALSE(out.result.ok());
  EXPECT_NE(out.result.error->message.find("too few arguments"), std::string::npos);
  EXPECT_EQ(cell(s->execute("SELECT concat('a', NULL, 1)").result), "a1");
  out = s->execute("SELECT llm_map('', 1)");
  ASSERT_FALSE(out.result.ok());
  EXPECT_NE(out.result.error->message.find("instruction is empty"), std::string::npos);
}

TEST_F(HybridFixture, LlmQaAnswersOncePerGroup) {
  auto items = std::make_shared<std::atomic<int>>(0);
  auto s = session(filler(echo(items)));
  const auto out = s->execute(
      "SELECT height_cm > 180 AS tall, llm_qa('Who leads?', superhero_name) FROM superhero GROUP BY tall ORDER BY tall");
  ASSERT_TRUE(out.result.ok()) << out.result.error->message;
  ASSERT_EQ(out.result.rows.size(), 2u);
  EXPECT_EQ(cell(out.result, 0, 1).rfind("seen [\"Hero 1\",", 0), 0u) << cell(out.result, 0, 1);
  EXPECT_EQ(*items, 2);
}

TEST_F(HybridFixture, TheOracleAnswersFunctionsAboutDroppedColumns) {
  auto oracle_llm = oracle();
  auto s = session(filler(oracle_llm));
  auto out = s->execute("SELECT COUNT(*) FROM superhero WHERE llm_map('Does the hero have blue eyes?', superhero_name) = TRUE");
  EXPECT_EQ(cell(out.result), "20");
  out = s->execute("SELECT llm_map_in('Provide the eye colour.', 'colour.colour', superhero_name) FROM superhero "
                   "WHERE id = 4");
  EXPECT_EQ(cell(out.result), "Brown");
  out = s->execute("SELECT COUNT(*) FROM superhero WHERE llm_map('Is the hero German?', superhero_name)");
  EXPECT_EQ(cell(out.result), "20");
  out = s->execute("SELECT llm_qa_in('List the super powers.', 'superpower::power_name', superhero_name) FROM "
                   "superhero WHERE id = 4");
  EXPECT_EQ(cell(out.result), "Agility, Super Strength");
  out = s->execute("SELECT llm_map('Does the hero have more than 1 super powers?', superhero_name) FROM superhero "
                   "WHERE id IN (3, 4) ORDER BY id");
  EXPECT_EQ(cell(out.result, 0), "0");
  EXPECT_EQ(cell(out.result, 1), "1");
  const auto unanswered = oracle_llm->unanswered_items();
  out = s->execute("SELECT llm_map('What is the capital of the moon?', 'nobody')");
  EXPECT_EQ(cell(out.result), "NULL");
  EXPECT_EQ(oracle_llm->unanswered_items(), unanswered + 1);
}

// Schools whose magnet flag and opening date were dropped; two rows share words across key columns.
class SchoolsFixture : public HybridFixture {
 protected:
  void SetUp() override {
    HybridFixture::SetUp();
    schools_original_ = (folder_ / "schools_original.sqlite").string();
    schools_curated_ = (folder_ / "schools_curated.sqlite").string();
    const std::string rows = "(1, 'Oak High', NULL, '1 Elm Road'), (2, 'Oak High East', 'Oak High', '9 Ash Road'),"
                             "(3, 'Pine Middle', NULL, '5 Fir Lane')";
    const std::string districts = "CREATE TABLE districts (id INTEGER PRIMARY KEY, name TEXT, opened DATE);"
                                  "INSERT INTO districts VALUES (1, 'North', '1950-01-01');";
    const std::string reports = "CREATE TABLE reports (id INTEGER PRIMARY KEY, school_id INTEGER REFERENCES "
                                "schools(id), rating TEXT); INSERT INTO reports VALUES (1, 1, 'good'), (2, 1, 'poor'),"
                                " (3, 3, 'fair');";
    const std::string games = "CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO teams VALUES "
                              "(1, 'Red Lions'), (2, 'Blue Hawks'), (3, 'Blue Hawks'); CREATE TABLE games (id INTEGER PRIMARY KEY, "
                              "home_id INTEGER REFERENCES teams(id), away_id INTEGER REFERENCES teams(id), date TEXT, "
                              "home_goals INTEGER, away_goals INTEGER); INSERT INTO games VALUES (1, 1, 2, '2020-05-01', 3, 0), "
                              "(2, 2, 1, '2020-09-12', 0, 2), (3, 1, 2, '2021-05-02', 1, 1), (4, 3, 2, '2022-01-01', 5, 4);";
    run_sql(schools_original_, districts + reports + games + "CREATE TABLE schools (id INTEGER PRIMARY KEY, school TEXT, former_name TEXT, street "
                               "TEXT, magnet INTEGER, opened DATE, funding TEXT); INSERT INTO schools (id, school, former_name, "
                               "street) VALUES " + rows + "; UPDATE schools SET magnet = CASE id WHEN 1 THEN 1 "
                               "WHEN 2 THEN 0 END, opened = CASE id WHEN 1 THEN '1999-09-01' WHEN 2 THEN "
                               "'2004-01-15' ELSE '1987-09-01' END, funding = CASE id WHEN 2 THEN 'Locally funded' ELSE "
                               "'Directly funded' END");
    run_sql(schools_curated_, districts + "CREATE TABLE schools (id INTEGER PRIMARY KEY, school TEXT, former_name TEXT, street "
                              "TEXT); INSERT INTO schools VALUES " + rows);
    OracleSource source{"schools", schools_original_, {}, {}};
    source.dropped = {{"schools.magnet", "1 if the school is a magnet school, else 0"},
                      {"schools.opened", "the date the school opened"},
                      {"schools.funding", "how the school is funded"},
                      {"reports.rating", "the rating an inspection report gave the school"},
                      {"games.home_goals", "the goals the home team scored in the game"},
                      {"games.away_goals", "the goals the away team scored in the game"}};
    source.keys = {{"schools", {"school", "former_name", "street"}},
                   {"teams", {"name"}},
                   {"games", {"home_id", "away_id"}}};
    oracle_ = std::make_shared<OracleFiller>(std::vector<OracleSource>{source});
    schools_ = std::make_unique<HybridSession>("schools", schools_curated_, HybridSchema{}, filler(oracle_),
                                               HybridOptions{});
  }

  std::string schools_original_, schools_curated_;
  std::shared_ptr<OracleFiller> oracle_;
  std::unique_ptr<HybridSession> schools_;
};

TEST_F(SchoolsFixture, AnInputNamingItsColumnIdentifiesRowsByThatColumnOnly) {
  // 'Oak High' is school 1's name and school 2's former name: as bare text it names two schools that disagree.
  auto out = schools_->execute("SELECT llm_map('Is it a magnet school?', school) FROM schools WHERE id = 1");
  EXPECT_EQ(cell(out.result), "NULL");
  EXPECT_EQ(oracle_->unanswered_items(), 1);
  out = schools_->execute(
      "SELECT llm_map('Is it a magnet school?', json_object('school', school)) FROM schools ORDER BY id");
  ASSERT_TRUE(out.result.ok()) << out.result.error->message;
  EXPECT_EQ(cell(out.result, 0), "1");
  EXPECT_EQ(cell(out.result, 1), "0");
  EXPECT_EQ(cell(out.result, 2), "NULL");  // its flag is unknown: answered unknown, not left unanswered
  EXPECT_EQ(oracle_->unanswered_items(), 1);
  EXPECT_EQ(out.stats.fills.items, 3);
  EXPECT_EQ(out.stats.requests.at(0).at("items"), 3);
  out = schools_->execute("SELECT llm_map('Is it a magnet school?', json_object('school', NULL))");
  EXPECT_EQ(cell(out.result), "NULL");  // an object of NULLs is NULL: nothing asked
  EXPECT_TRUE(out.stats.requests.empty());
}

TEST_F(SchoolsFixture, YesNoQuestionsCompareDaysAndReadFlags) {
  auto out = schools_->execute("SELECT school FROM schools WHERE llm_map('Was the school opened on 09-01?', "
                               "json_object('street', street)) = TRUE ORDER BY id");
  ASSERT_EQ(out.result.rows.size(), 2u) << cell(out.result);
  EXPECT_EQ(cell(out.result, 1), "Pine Middle");
  out = schools_->execute("SELECT COUNT(*) FROM schools WHERE llm_map('Was it opened on 2004-01-15?', "
                          "json_object('street', street))");
  EXPECT_EQ(cell(out.result), "1");
  out = schools_->execute("SELECT COUNT(*) FROM schools WHERE llm_map('Is the school funded directly?', "
                          "json_object('street', street))");  // the value 'Directly funded', in other words
  EXPECT_EQ(cell(out.result), "2");
  EXPECT_EQ(oracle_->unanswered_items(), 0);
}

TEST_F(SchoolsFixture, AFactOfRowsReferencingTheIdentifiedRowIsAnsweredOnlyWhereTheyAgree) {
  const auto out = schools_->execute("SELECT llm_map('Provide the inspection rating.', json_object('school', school)) "
                                     "FROM schools WHERE id IN (1, 3) ORDER BY id");
  EXPECT_EQ(cell(out.result, 0), "NULL");  // two reports of Oak High disagree
  EXPECT_EQ(cell(out.result, 1), "fair");
  EXPECT_EQ(oracle_->unanswered_items(), 1);
}

TEST_F(SchoolsFixture, RowsAreIdentifiedByTheRowsTheirKeysReferenceAndTheirOtherValues) {
  // games are keyed by the ids of their teams, which the text names: the two teams and the date name one game
  auto out = schools_->execute("SELECT llm_map('Provide the home team goals.', 'Home: Blue Hawks, Away: Red Lions, "
                               "Date: 2020-09-12'), llm_map('Provide the home team goals.', 'Home: Red Lions, Away: "
                               "Blue Hawks, Date: 2021-05-02')");
  EXPECT_EQ(cell(out.result, 0, 0), "0");
  EXPECT_EQ(cell(out.result, 0, 1), "1");
  EXPECT_EQ(oracle_->unanswered_items(), 0);
  // two clubs of one name: each place the name is written names one of them
  out = schools_->execute("SELECT llm_map('Provide the home team goals.', 'Home: Blue Hawks, Away: Blue Hawks, "
                          "Date: 2022-01-01')");
  EXPECT_EQ(cell(out.result), "5");
  EXPECT_EQ(oracle_->unanswered_items(), 0);
  // without the date the teams' three games disagree
  out = schools_->execute("SELECT llm_map('Provide the home team goals.', 'Home: Red Lions, Away: Blue Hawks')");
  EXPECT_EQ(cell(out.result), "NULL");
  EXPECT_EQ(oracle_->unanswered_items(), 1);
  // 'the total goals' names the home and the away goals alike: neither is what it asks
  out = schools_->execute("SELECT llm_map('Provide the total goals.', 'Home: Blue Hawks, Away: Red Lions, "
                          "Date: 2020-09-12')");
  EXPECT_EQ(cell(out.result), "NULL");
  EXPECT_EQ(oracle_->unanswered_items(), 2);
}

TEST_F(SchoolsFixture, AnInstructionAboutAStoredColumnOfAnotherTableIsNotAnswered) {
  auto out = schools_->execute("SELECT llm_map('When was the school opened?', json_object('school', school)) "
                               "FROM schools WHERE id = 1");
  EXPECT_EQ(cell(out.result), "1999-09-01");
  // districts.opened is stored: the dropped schools.opened is not what this asks
  out = schools_->execute("SELECT llm_map('When was its district opened?', json_object('school', school)) "
                          "FROM schools WHERE id = 1");
  EXPECT_EQ(cell(out.result), "NULL");
  EXPECT_EQ(oracle_->unanswered_items(), 1);
}

TEST_F(HybridFixture, LlmMatchPicksTheStoredValueForJoins) {
  auto s = session(filler(oracle()));
  const auto out = s->execute(
      "SELECT T2.id FROM (SELECT 'super-strength' AS wanted) T1 JOIN superpower T2 "
      "ON T2.power_name = llm_match('the same power', T1.wanted, 'superpower.power_name')");
  EXPECT_EQ(cell(out.result), "3");
}

TEST_F(HybridFixture, TheOracleRefusesOtherRequestsAndErrsAtTheConfiguredRate) {
  auto oracle_llm = oracle();
  EXPECT_THROW(oracle_llm->chat({{"user", "What is 2 + 2?"}}), Error);
  EXPECT_THROW(OracleFiller({}, OracleOptions{1.5, 1}), Error);

  auto noisy = oracle(0.2);
  auto s = session(filler(noisy));
  s->fill_all();
  auto truth = session(filler(oracle()));
  int wrong = 0, total = 0;
  const auto noisy_rows = s->execute("SELECT nationality FROM superhero ORDER BY id").result.rows;
  for (size_t i = 0; i < noisy_rows.size(); ++i) {
    const std::string t = (i + 1) % 3 == 0 ? "German" : (i + 1) % 3 == 1 ? "British" : "French";
    wrong += value_to_string(noisy_rows[i][0]) != t;
    ++total;
  }
  EXPECT_GT(wrong, 3);
  EXPECT_LT(wrong, 25);
  EXPECT_EQ(total, kHeroes);
}

}  // namespace
}  // namespace relmem::hybrid
