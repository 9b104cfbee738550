// Training on a small generated collection: composite questions, loss going down, held-out ranking, the
// calibrated threshold, determinism for a seed, and the questions-file reader.
#include <algorithm>
#include <cmath>
#include <limits>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/training/relevance_training.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

const std::vector<std::vector<std::string>> kTopics = {
    {"doctor", "patient", "hospital", "nurse", "ward", "surgery"},
    {"flight", "airline", "airport", "pilot", "runway", "departure"},
    {"singer", "concert", "stadium", "song", "album", "tour"},
    {"student", "course", "grade", "professor", "campus", "exam"},
    {"employee", "salary", "department", "manager", "office", "hire"},
    {"movie", "director", "actor", "studio", "rating", "premiere"},
    {"player", "team", "match", "coach", "league", "season"},
    {"book", "author", "publisher", "library", "chapter", "isbn"},
    {"car", "engine", "maker", "model", "horsepower", "dealer"},
    {"recipe", "ingredient", "chef", "kitchen", "dish", "cuisine"},
};

std::vector<DatabaseTexts> make_databases() {
  std::vector<DatabaseTexts> dbs;
  for (size_t i = 0; i < kTopics.size(); ++i) {
    const auto& w = kTopics[i];
    DatabaseTexts db;
    db.name = "db_" + w[0];
    db.card = "database " + w[0] + "\n" + w[0] + ": name, " + w[1] + " id, " + w[4] + "\n" + w[2] + ": " + w[3];
    db.table_names = {w[0], w[2]};
    db.table_cards = {"database " + w[0] + "\n" + w[0] + ": name, " + w[1] + ", " + w[4],
                      "database " + w[0] + "\n" + w[2] + ": " + w[3] + ", " + w[5]};
    db.lexical_card = db.card + " values " + w[5];
    db.lexical_table_cards = db.table_cards;
    dbs.push_back(db);
  }
  return dbs;
}

std::vector<LabeledQuestion> make_questions(int per_database) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> starts = {"how many", "list every", "which", "show the average", "count the"};
  std::vector<LabeledQuestion> questions;
  for (const auto& w : kTopics) {
    for (int i = 0; i < per_database; ++i) {
      const auto& a = w[rng() % w.size()];
      const auto& b = w[rng() % w.size()];
      questions.push_back({starts[rng() % starts.size()] + " " + a + " with " + b + "?", {"db_" + w[0]}});
    }
  }
  return questions;
}

TrainingOptions small_options() {
  TrainingOptions o;
  o.epochs = 4;
  o.batch = 8;
  o.projection_dim = 16;
  o.hidden_dim = 8;
  o.negatives = 3;
  o.heldout_fraction = 0.2f;
  o.learning_rate = 5e-3f;
  o.threads = 1;
  o.seed = 3;
  return o;
}

}  // namespace

TEST(Composites, JoinPartsFromDifferentDatabases) {
  const auto singles = make_questions(3);
  std::mt19937_64 rng(1);
  CompositeOptions options;
  options.max_parts = 3;
  const auto composites = make_composites(singles, 50, options, rng);
  ASSERT_EQ(composites.size(), 50u);
  std::set<size_t> sizes;
  for (const auto& c : composites) {
    sizes.insert(c.databases.size());
    EXPECT_EQ(std::set<std::string>(c.databases.begin(), c.databases.end()).size(), c.databases.size());
    ASSERT_EQ(c.parts.size(), c.databases.size());
    size_t from = 0;  // each part is a single question of its database, written into the text in order
    for (size_t i = 0; i < c.parts.size(); ++i) {
      const auto single = std::find_if(singles.begin(), singles.end(), [&](const LabeledQuestion& q) {
        return q.text == c.parts[i] && q.databases[0] == c.databases[i];
      });
      EXPECT_NE(single, singles.end()) << c.parts[i];
      const size_t at = c.text.find(c.parts[i], from);
      ASSERT_NE(at, std::string::npos) << c.text;
      from = at + c.parts[i].size();
    }
  }
  EXPECT_EQ(sizes, (std::set<size_t>{2, 3}));
  std::mt19937_64 again(1);
  const auto repeated = make_composites(singles, 50, options, again);
  for (size_t i = 0; i < composites.size(); ++i) EXPECT_EQ(composites[i].text, repeated[i].text);
  std::mt19937_64 one(1);
  EXPECT_TRUE(make_composites({singles[0]}, 5, options, one).empty());  // a single database cannot compose
  options.min_parts = options.max_parts = 3;
  options.styles = {CompositeStyle::Concatenate};
  for (const auto& c : make_composites(singles, 10, options, one)) {
    EXPECT_EQ(c.databases.size(), 3u);
    EXPECT_EQ(c.text.find("Q1:"), std::string::npos);
  }
  options.min_parts = 1;
  EXPECT_THROW(make_composites(singles, 5, options, one), Error);
}

TEST(Composites, Templates) {
  EXPECT_EQ(compose_question({"How many singers?", "How many cars?"}, CompositeStyle::LargerNumber),
            "Which question has a larger number as its answer. Q1: How many singers?; Q2: How many cars?");
  EXPECT_EQ(compose_question({"a?", "b?"}, CompositeStyle::Concatenate), "a? b?");
  EXPECT_EQ(compose_question({"a?", "b?"}, CompositeStyle::AndAlso), "a? Also, b?");
  EXPECT_EQ(parse_composite_style("larger-number"), CompositeStyle::LargerNumber);
  EXPECT_THROW(parse_composite_style("zigzag"), Error);
}

TEST(LabeledQuestions, ReadsSingleAndMultiDatabaseEntries) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("q.json");
  relmem_test::write_bytes(path, R"([{"question": "a?", "db_id": "x", "query": "SELECT 1"},
                                     {"question": "b?", "db_ids": ["x", "y"]}])");
  const auto questions = load_labeled_questions(path);
  ASSERT_EQ(questions.size(), 2u);
  EXPECT_EQ(questions[0].databases, std::vector<std::string>{"x"});
  EXPECT_EQ(questions[1].databases, (std::vector<std::string>{"x", "y"}));
  relmem_test::write_bytes(path, R"([{"question": "a?"}])");
  EXPECT_THROW(load_labeled_questions(path), Error);
  relmem_test::write_bytes(path, R"({"question": "a?"})");
  EXPECT_THROW(load_labeled_questions(path), Error);
  relmem_test::write_bytes(path, "[{");
  EXPECT_THROW(load_labeled_questions(path), Error);
  EXPECT_THROW(load_labeled_questions(dir.file("missing.json")), Error);
}

TEST(RelevanceTraining, LearnsOnGeneratedData) {
  HashingEncoder encoder(64), lexical(128);
  std::vector<EpochReport> reports;
  const auto result = train_relevance(encoder, &lexical, make_databases(), make_questions(12), small_options(),
                                      [&](const EpochReport& r) { reports.push_back(r); });
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_LT(reports.back().loss, reports.front().loss);
  EXPECT_EQ(result.heldout_databases.size(), 2u);
  EXPECT_GE(result.best_epoch, 1);
  const auto& best = result.epochs[static_cast<size_t>(result.best_epoch - 1)];
  EXPECT_GE(best.heldout_recall_at_5, 0.9);  // 10 databases: the right one is almost always in the top 5
  EXPECT_GE(best.heldout_recall_at_1, 0.5);
  EXPECT_GT(result.model.threshold(), 0.0f);
  EXPECT_LT(result.model.threshold(), 1.0f);
  EXPECT_GT(result.heldout_set.f1, 0.3);
  EXPECT_EQ(result.model.config().encoder, "hashing:64");
  EXPECT_EQ(result.model.config().lexical_encoder, "hashing:128");
  EXPECT_NE(result.model.training_info_json().find("\"best_epoch\""), std::string::npos);
}

// The largest difference between two parameter vectors (infinite when their sizes differ).
float largest_difference(const std::vector<float>& x, const std::vector<float>& y) {
  float largest = x.size() == y.size() ? 0.0f : std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) largest = std::max(largest, std::abs(x[i] - y[i]));
  return largest;
}

TEST(RelevanceTraining, DeterministicForASeed) {
  HashingEncoder encoder(32);
  TrainingOptions o = small_options();
  o.epochs = 2;
  const auto a = train_relevance(encoder, nullptr, make_databases(), make_questions(6), o);
  const auto b = train_relevance(encoder, nullptr, make_databases(), make_questions(6), o);
  // Equal to float rounding: two trainings in one process have differed in the 7th digit.
  EXPECT_LE(largest_difference(a.model.parameters().values(), b.model.parameters().values()), 1e-5f);
  o.seed = 4;
  const auto c = train_relevance(encoder, nullptr, make_databases(), make_questions(6), o);
  EXPECT_GT(largest_difference(a.model.parameters().values(), c.model.parameters().values()), 1e-3f);
}

TEST(RelevanceTraining, EmbeddingCacheGivesTheSameModel) {
  relmem_test::TempDir dir;
  HashingEncoder encoder(32);
  TrainingOptions o = small_options();
  o.epochs = 1;
  o.cache_dir = dir.file("cache");
  const auto first = train_relevance(encoder, nullptr, make_databases(), make_questions(6), o);
  const auto second = train_relevance(encoder, nullptr, make_databases(), make_questions(6), o);  // reads the cache
  EXPECT_LE(largest_difference(first.model.parameters().values(), second.model.parameters().values()), 1e-5f);
  EXPECT_FALSE(std::filesystem::is_empty(o.cache_dir));
}

// Training and serving compute a question's features through one code path: a memory holding the training
// databases and the trained model scores each question exactly as training did. Half the databases have column
// rows, the other half (tables without columns) stand in their best table.
TEST(RelevanceTraining, TrainingFeaturesAreServingFeatures) {
  auto encoder = std::make_shared<HashingEncoder>(64);
  HashingEncoder lexical(128);
  auto databases = make_databases();
  for (size_t i = 0; i < databases.size(); i += 2)
    databases[i].column_cards = {kTopics[i][0] + " name", kTopics[i][2] + " " + kTopics[i][3]};
  databases[1].values = {"boston", "mercy general"};
  TrainingOptions o = small_options();
  o.epochs = 2;
  const auto model = std::make_shared<RelevanceModel>(
      train_relevance(*encoder, &lexical, databases, make_questions(6), o).model);

  SelectionOptions options;
  options.lexical_encoder = lexical.name();
  SelectionMemory memory(encoder, options);
  for (const auto& db : databases) {
    const RowMatrix card = encoder->encode({db.card});
    const RowMatrix tables = encoder->encode(db.table_cards);
    const RowMatrix columns = db.column_cards.empty() ? RowMatrix() : encoder->encode(db.column_cards);
    const RowMatrix lexical_card = lexical.encode({db.lexical_card});
    const RowMatrix lexical_tables = lexical.encode(db.lexical_table_cards);
    memory.add_vectors(db.name, card.data(), db.table_names, tables, lexical_card.data(), &lexical_tables, &columns,
                       db.values);
  }
  memory.set_model(model);

  const std::vector<std::string> questions = {"which doctor works in boston?", "how many flights leave each airport?",
                                              "list every singer with a concert", "average salary by department"};
  const RowMatrix logits = training_logits(*model, *encoder, &lexical, databases, questions);
  for (size_t q = 0; q < questions.size(); ++q) {
    const auto matches = memory.select(questions[q], static_cast<int>(databases.size()));
    ASSERT_EQ(matches.size(), databases.size());
    for (const auto& match : matches) {
      int column = 0;
      while (databases[static_cast<size_t>(column)].name != match.database) ++column;
      EXPECT_NEAR(match.score, logits(static_cast<int64_t>(q), column), 1e-4f) << questions[q] << " / " << match.database;
    }
  }
}

TEST(RelevanceTraining, BadOptionsAndDataAreRefused) {
  HashingEncoder encoder(32);
  TrainingOptions o = small_options();
  o.epochs = 0;
  EXPECT_THROW(train_relevance(encoder, nullptr, make_databases(), make_questions(2), o), Error);
  o = small_options();
  o.device = "tpu";
  EXPECT_THROW(train_relevance(encoder, nullptr, make_databases(), make_questions(2), o), Error);
  o = small_options();
  EXPECT_THROW(train_relevance(encoder, nullptr, make_databases(), {{"q?", {"elsewhere"}}}, o), Error);
  auto twice = make_databases();
  twice.push_back(twice[0]);
  EXPECT_THROW(train_relevance(encoder, nullptr, twice, make_questions(2), o), Error);
}
