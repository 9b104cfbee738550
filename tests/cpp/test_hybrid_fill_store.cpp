// The fill store and the filler: provenance, reuse after reopening, malformed replies, timeouts, wrong types.
#include <atomic>

#include "hybrid_fixture.hpp"
#include "relmem/llm/callable_llm.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

std::shared_ptr<CallableLLM> scripted(std::vector<std::string> replies, std::shared_ptr<std::atomic<int>> calls) {
  return std::make_shared<CallableLLM>(
      [replies, calls](const std::vector<ChatMessage>& messages, const ChatParams&) {
        const int call = (*calls)++;
        const std::string& text = replies[std::min<size_t>(call, replies.size() - 1)];
        if (text == "<timeout>") throw Error("request timed out after 120 s");
        return ChatResponse{text, estimate_usage(messages, text), "stop", false};
      },
      "scripted");
}

FillTask nationality_task() {
  FillTask task;
  task.kind = "fill";
  task.stage = "hybrid_fill";
  task.database = "heroes";
  task.table = "superhero";
  task.key_columns = {"superhero_name"};
  task.answers = {{"nationality", FillType::Text, false, "the hero's nationality", {}, ""},
                  {"height", FillType::Integer, false, "height in cm", {}, ""}};
  task.scopes = {"test:nationality", "test:height"};
  return task;
}

std::vector<FillItem> items(int n) {
  std::vector<FillItem> out;
  for (int i = 1; i <= n; ++i) {
    const json shown = {{"superhero_name", "Hero " + std::to_string(i)}};
    out.push_back({item_key(shown), shown});
  }
  return out;
}

TEST_F(HybridFixture, StoreKeepsValuesWithProvenanceAcrossReopening) {
  {
    FillStore store(store_path_);
    store.put("scope", {{"[1]", json("British"), ""}, {"[2]", json(), "the LLM did not know"}},
              {"model-x", "hash-1", "{\"1\": \"British\"}", 30, 8, ""});
  }
  FillStore reopened(store_path_);
  EXPECT_EQ(reopened.size(), 2);
  EXPECT_EQ(reopened.requests(), 1);
  const auto values = reopened.values("scope");
  EXPECT_EQ(values.at("[1]"), json("British"));
  EXPECT_TRUE(values.at("[2]").is_null());
  const auto record = reopened.record("scope", "[2]");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->reason, "the LLM did not know");
  EXPECT_EQ(record->provenance.model, "model-x");
  EXPECT_EQ(record->provenance.prompt_hash, "hash-1");
  EXPECT_EQ(record->provenance.raw_answer, "{\"1\": \"British\"}");
  EXPECT_EQ(record->provenance.prompt_tokens, 30);
  EXPECT_FALSE(record->provenance.created_at.empty());
  EXPECT_FALSE(reopened.record("scope", "[3]"));
}

TEST_F(HybridFixture, StoreRefusesAnotherApplicationsDatabase) {
  EXPECT_THROW(FillStore store(curated_), Error);
  EXPECT_THROW(FillStore store(folder_.string()), Error);  // a folder
}

TEST_F(HybridFixture, FillerBatchesParsesLenientlyAndChecksTypes) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  // Fenced JSON with prose and a trailing comma; item 2's height is not a number, item 3 is missing.
  auto f = filler(scripted({"Sure! ```json\n{\"1\": {\"nationality\": \"British\", \"height\": \"180 cm\"},"
                            " \"2\": {\"nationality\": \"French\", \"height\": \"tall\"},}\n```",
                            "{\"1\": {\"nationality\": \"German\", \"height\": \"abc\"}, \"2\": {\"nationality\": null, \"height\": 170}}"},
                           calls));
  const auto outcome = f->fill(nationality_task(), items(3));
  EXPECT_EQ(*calls, 2);  // items 2 and 3 asked once more, together
  const std::string k1 = items(3)[0].key, k2 = items(3)[1].key, k3 = items(3)[2].key;
  EXPECT_EQ(outcome.values[0].at(k1), json("British"));
  EXPECT_EQ(outcome.values[1].at(k1), json(180));
  EXPECT_EQ(outcome.values[0].at(k2), json("German"));  // the second answer replaces the first for retried items
  EXPECT_TRUE(outcome.values[1].at(k2).is_null());      // "abc" twice: not an integer
  EXPECT_TRUE(outcome.values[0].at(k3).is_null());      // unknown
  EXPECT_EQ(outcome.values[1].at(k3), json(170));
  const auto record = f->store()->record("test:height", k2);
  ASSERT_TRUE(record);
  EXPECT_NE(record->reason.find("not an integer"), std::string::npos) << record->reason;
  EXPECT_NE(record->reason.find("asked twice"), std::string::npos);
  EXPECT_EQ(f->store()->record("test:nationality", k3)->reason, "the LLM did not know");
  EXPECT_EQ(ledger_->by_stage().at("hybrid_fill").calls, 2);
}

TEST_F(HybridFixture, RequestsPutTheRowsBeforeTheAnswersAsked) {
  std::string request;
  auto capture = std::make_shared<CallableLLM>(
      [&request](const std::vector<ChatMessage>& messages, const ChatParams&) {
        request = messages.back().content;
        const std::string text = "{\"1\": {\"nationality\": \"British\", \"height\": 180}}";
        return ChatResponse{text, estimate_usage(messages, text), "stop", false};
      },
      "capture");
  const auto outcome = filler(capture)->fill(nationality_task(), items(1));
  EXPECT_EQ(outcome.values[0].at(items(1)[0].key), json("British"));
  const size_t body = request.find("<request>\n");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(request.compare(body + 10, 15, "{\"task\":\"fill\","), 0) << request;
  const size_t rows = request.find("\"rows\":"), answers = request.find("\"answers\":");
  ASSERT_NE(rows, std::string::npos);
  ASSERT_NE(answers, std::string::npos);
  EXPECT_LT(rows, answers) << request;  // the answers asked come last, next to where the reply starts
}

TEST_F(HybridFixture, MalformedRepliesLeaveNullsWithTheReason) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto f = filler(scripted({"I cannot answer that.", "{\"1\": {\"nationality\": \"Brit"}, calls));
  const auto outcome = f->fill(nationality_task(), items(2));
  EXPECT_EQ(*calls, 2);
  EXPECT_EQ(outcome.report.nulls, 4);
  const auto record = f->store()->record("test:nationality", items(2)[0].key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->reason, "unreadable answer (asked twice)");
  EXPECT_EQ(record->provenance.raw_answer, "{\"1\": {\"nationality\": \"Brit");
}

TEST_F(HybridFixture, TimeoutsAreRetriedOnceAndNotStored) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto f = filler(scripted({"<timeout>", "<timeout>", "{\"1\": {\"nationality\": \"British\", \"height\": 1}}"}, calls));
  auto outcome = f->fill(nationality_task(), items(1));
  EXPECT_EQ(*calls, 2);
  EXPECT_EQ(outcome.report.failed_requests, 2);
  EXPECT_TRUE(outcome.values[0].at(items(1)[0].key).is_null());
  EXPECT_EQ(f->store()->size(), 0);  // a later question asks again
  outcome = f->fill(nationality_task(), items(1));
  EXPECT_EQ(outcome.values[0].at(items(1)[0].key), json("British"));
  EXPECT_EQ(f->store()->size(), 2);
}

TEST_F(HybridFixture, AllowedValuesConstrainAnswers) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto f = filler(scripted({"[{\"id\": 1, \"answer\": \"blue\"}, {\"id\": 2, \"answer\": \"Purple\"}]",
                            "[{\"id\": 1, \"answer\": \"Purple\"}]"},
                           calls));
  FillTask task;
  task.kind = "map";
  task.stage = "hybrid_map";
  task.database = "heroes";
  task.instruction = "Provide the eye colour.";
  task.answers = {{"answer", FillType::Any, false, "", {"Blue", "Brown"}, "colour.colour"}};
  task.scopes = {"test:eyes"};
  std::vector<FillItem> inputs = {{"\"Hero 1\"", json("Hero 1")}, {"\"Hero 2\"", json("Hero 2")}};
  const auto outcome = f->fill(task, inputs);
  EXPECT_EQ(outcome.values[0].at("\"Hero 1\""), json("Blue"));  // stored spelling
  EXPECT_TRUE(outcome.values[0].at("\"Hero 2\"").is_null());
  EXPECT_NE(f->store()->record("test:eyes", "\"Hero 2\"")->reason.find("not an allowed value"), std::string::npos);
}

TEST(HybridSchemaJson, RoundTripsAndRejectsMalformedDeclarations) {
  const json declared = json::parse(R"json({"tables": [{"table": "drivers", "keys": ["forename", "surname"],
      "columns": [{"name": "nationality", "type": "TEXT", "meaning": "nationality of the driver"},
                  {"name": "eye", "type": "INTEGER", "references": {"table": "colour", "label": "colour"}},
                  {"name": "kind", "type": "VARCHAR(20)", "values": ["a", "b"]},
                  {"name": "power", "values_from": "superpower::power_name"}]}],
      "relations": [{"name": "hero_power", "owner": {"table": "superhero", "column": "hero_id"},
                     "target": {"table": "superpower", "label": "power_name", "column": "power_id"}}],
      "value_tables": [{"name": "alignment", "label": "alignment", "values": ["Good", "Bad"]}]})json");
  const auto schema = HybridSchema::from_json(declared);
  ASSERT_EQ(schema.tables.size(), 1u);
  EXPECT_EQ(schema.tables[0].columns[1].reference->id_column, "id");
  EXPECT_EQ(schema.tables[0].columns[3].domain.table, "superpower");
  EXPECT_EQ(schema.tables[0].columns[3].domain.column, "power_name");
  EXPECT_EQ(HybridSchema::from_json(schema.to_json()).to_json(), schema.to_json());
  EXPECT_THROW(HybridSchema::from_json(json::parse(R"({"tables": [{"table": "t"}]})")), Error);
  EXPECT_THROW(HybridSchema::from_json(json::parse(R"({"tables": [{"table": "t", "columns": [{"name": "c", "type": "BLOBBY"}]}]})")),
               Error);
  EXPECT_THROW(HybridSchema::from_json(json::parse("[1]")), Error);
}

}  // namespace
}  // namespace relmem::hybrid
