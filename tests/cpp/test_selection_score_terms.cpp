// The selection memory's score terms on a small generated collection: stored values as evidence, column vectors,
// each word's lead and its best column per table, question forms, hubness, and synonyms of words that meet no column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../../cpp/src/memories/selection/database_list_file.hpp"
#include "relmem/memories/text/question_spans.hpp"
#include "relmem/memories/text/wordnet.hpp"
#include "selection_memory_fixture.hpp"

using namespace relmem;
using namespace relmem_test;

TEST_F(SelectionMemoryTest, StoredValuesAreEvidence) {
  SelectionOptions without_values;
  without_values.samples_per_column = 0;  // no values in the cards either
  without_values.values_per_column = 0;
  SelectionOptions with_values = without_values;
  with_values.values_per_column = 100;
  const auto plain = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, without_values);
  auto valued = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, with_values);
  const std::string question = "Which city is Mercy General in?";
  auto score_of = [&](const SelectionMemory& memory, const std::string& db) {
    for (const auto& match : memory.select(question, 4))
      if (match.database == db) return match.score;
    ADD_FAILURE() << db << " not ranked";
    return 0.0f;
  };
  // 'Mercy General' is stored in one of the four databases and written as a name: evidence 2 x log(4 / 1).
  EXPECT_NEAR(score_of(valued, "hospital") - score_of(plain, "hospital"),
              kValueWeight * kNamedPhraseBoost * std::log(4.0f), 1e-5);
  EXPECT_NEAR(score_of(valued, "flights"), score_of(plain, "flights"), 1e-6);
  // Removing the database removes its values; adding it back restores them.
  const float before = score_of(valued, "hospital");
  valued.remove("hospital");
  valued.add(catalog, "hospital", "", {});
  EXPECT_NEAR(score_of(valued, "hospital"), before, 1e-6);
}

TEST_F(SelectionMemoryTest, ColumnVectorsJoinTheScore) {
  // The words alone (SynonymsStandInForWordsThatMeetNoColumn).
  SelectionMemory memory(encoder, exact_options());
  const RowMatrix card = encoder->encode({"database clinic"});
  const RowMatrix tables = encoder->encode({"clinic staff"});
  const RowMatrix columns = encoder->encode({"clinic staff", "doctor specialty"});
  memory.add_vectors("with_columns", card.data(), {"clinic"}, tables, nullptr, nullptr, &columns, {"mercy general"});
  memory.add_vectors("without_columns", card.data(), {"clinic"}, tables);
  const RowMatrix q = encoder->encode({"doctor specialty"});
  const float card_cosine = card.row(0).dot(q.row(0)) / (card.row(0).norm() * q.row(0).norm());
  const float table_cosine = tables.row(0).dot(q.row(0)) / (tables.row(0).norm() * q.row(0).norm());
  const auto matches = memory.select_vector(q.data(), 2);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].database, "with_columns");
  // The best column scores 1; without columns, the best table stands in for it, and without question forms, the
  // best column for the best form.
  EXPECT_NEAR(matches[0].score, 0.5f * (card_cosine + table_cosine) + (kColumnWeight + kQuestionFormWeight) * 1.0f,
              1e-5);
  EXPECT_NEAR(matches[1].score,
              0.5f * (card_cosine + table_cosine) + (kColumnWeight + kQuestionFormWeight) * table_cosine, 1e-5);
  // The question's text brings the stored values in ('mercy general' is stored by one of the two databases) and
  // its words, each meeting its best column.
  const std::string text = "doctor specialty at Mercy General";
  const std::vector<std::string> words = question_phrases(text, 1);
  ASSERT_EQ(words, (std::vector<std::string>{"doctor", "general", "mercy", "specialty"}));
  RowMatrix word_rows = encoder->encode(words), column_rows = columns;
  word_rows.rowwise().normalize();
  column_rows.rowwise().normalize();
  const float word_column = (word_rows * column_rows.transpose()).rowwise().maxCoeff().mean();
  EXPECT_GT(word_column, 0.1f);
  const RowMatrix encoded = encoder->encode({text});
  const auto by_text = memory.select(text, 1), by_vector = memory.select_vector(encoded.data(), 1);
  ASSERT_EQ(by_text[0].database, "with_columns");
  ASSERT_EQ(by_vector[0].database, "with_columns");
  // Added from vectors, the database's columns count as one table: its table word-column is the word-column mean.
  EXPECT_NEAR(by_text[0].score - by_vector[0].score,
              kValueWeight * kNamedPhraseBoost * std::log(2.0f) +
                  (kWordColumnWeight + kTableWordColumnWeight) * word_column,
              1e-5);
  const RowMatrix wrong(1, 7);
  EXPECT_THROW(memory.add_vectors("x", card.data(), {}, RowMatrix(0, 256), nullptr, nullptr, &wrong), Error);
}

// The word lead: per question word, how far the database's best column beats every other candidate's (0 where
// another candidate leads), averaged over the words; recomputed here from the stored column vectors.
TEST_F(SelectionMemoryTest, WordLeadIsEachWordsMarginOverTheOtherCandidates) {
  SelectionOptions options;
  options.lexical_encoder = "";
  options.column_dtype = "fp32";
  options.synonyms = false;
  const auto memory = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, options);
  const std::string question = "specialty of each doctor and the airline of each flight";
  RowMatrix word_rows = encoder->encode(question_phrases(question, 1));
  word_rows.rowwise().normalize();
  const QuestionSimilarities found = memory.similarities({question})[0];
  ASSERT_EQ(found.databases.size(), 4u);
  RowMatrix bests(word_rows.rows(), 4);  // per word, each candidate's best column
  for (int c = 0; c < 4; ++c)
    bests.col(c) = (word_rows * memory.vectors(found.databases[static_cast<size_t>(c)]).columns.transpose())
                       .rowwise()
                       .maxCoeff();
  float total = 0.0f;
  for (int c = 0; c < 4; ++c) {
    double lead = 0.0;
    for (int64_t w = 0; w < bests.rows(); ++w) {
      float other = -2.0f;
      for (int o = 0; o < 4; ++o)
        if (o != c) other = std::max(other, bests(w, o));
      lead += std::max(0.0f, bests(w, c) - other);
    }
    EXPECT_NEAR(found.raw[static_cast<size_t>(c)].word_lead, lead / static_cast<double>(bests.rows()), 1e-5)
        << found.databases[static_cast<size_t>(c)];
    total += found.raw[static_cast<size_t>(c)].word_lead;
  }
  EXPECT_GT(total, 0.0f);
  EXPECT_FLOAT_EQ(found.best.word_lead, std::max({found.raw[0].word_lead, found.raw[1].word_lead,
                                                   found.raw[2].word_lead, found.raw[3].word_lead}));
}

// The table word-column feature: each question word's best column within one table, averaged over the words, for
// the best table. Words spread over two tables score below the database-wide word-column mean; the feature
// survives a save and load (the column count of every table is saved).
TEST_F(SelectionMemoryTest, TableWordColumnReadsOneTableAtATime) {
  SelectionOptions options;
  options.lexical_encoder = "";
  options.column_dtype = "fp32";
  options.synonyms = false;
  const auto memory = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, options);
  const std::string question = "specialty of each doctor and beds of each hospital";
  const std::vector<std::string> words = question_phrases(question, 1);
  ASSERT_EQ(words, (std::vector<std::string>{"beds", "doctor", "hospital", "specialty"}));
  RowMatrix word_rows = encoder->encode(words);
  word_rows.rowwise().normalize();
  auto best_columns = [&](const std::vector<std::string>& columns) -> Eigen::VectorXf {
    RowMatrix rows = encoder->encode(columns);
    rows.rowwise().normalize();
    return (word_rows * rows.transpose()).rowwise().maxCoeff();
  };
  const std::vector<std::string> hospital = {"hospital id", "hospital name", "hospital city", "hospital beds"};
  const std::vector<std::string> doctor = {"doctor id", "doctor name", "doctor specialty", "doctor hospital id"};
  std::vector<std::string> both = hospital;
  both.insert(both.end(), doctor.begin(), doctor.end());
  const float per_table = std::max(best_columns(hospital).mean(), best_columns(doctor).mean());
  const float whole = best_columns(both).mean();
  ASSERT_LT(per_table, whole - 0.05f);
  auto raw_of = [&](const SelectionMemory& m) {
    const QuestionSimilarities found = m.similarities({question})[0];
    const auto at = std::find(found.databases.begin(), found.databases.end(), "hospital") - found.databases.begin();
    return found.raw.at(static_cast<size_t>(at));
  };
  const RawSimilarities raw = raw_of(memory);
  EXPECT_NEAR(raw.word_column, whole, 1e-5);
  EXPECT_NEAR(raw.table_word_column, per_table, 1e-5);
  memory.save(dir.file("saved"));
  EXPECT_NEAR(raw_of(SelectionMemory::load(dir.file("saved"))).table_word_column, per_table, 1e-5);
  // A saved list whose column counts do not fit the database's tables is refused on load.
  std::vector<SavedDatabase> list = load_database_list(dir.file("saved") + "/databases.bin");
  ASSERT_FALSE(list[0].table_columns.empty());
  list[0].table_columns.back() += 1;
  save_database_list(list, dir.file("saved") + "/databases.bin");
  EXPECT_THROW(SelectionMemory::load(dir.file("saved")), Error);
  // Added from its stored vectors with its tables' column counts, the database keeps them; counts that do not add
  // up to its columns are refused.
  const DatabaseVectors stored = memory.vectors("hospital");
  EXPECT_EQ(stored.table_columns, (std::vector<int64_t>{4, 4}));
  SelectionMemory copy(encoder, options);
  copy.add_vectors("hospital", stored.card.data(), stored.table_names, stored.tables, nullptr, nullptr,
                   &stored.columns, stored.values, stored.table_columns);
  EXPECT_NEAR(raw_of(copy).table_word_column, per_table, 1e-5);
  EXPECT_THROW(copy.add_vectors("x", stored.card.data(), stored.table_names, stored.tables, nullptr, nullptr,
                                &stored.columns, {}, {4, 3}),
               Error);
}

// Every table is embedded also as questions one could ask of it; the question's best cosine with them joins the
// score (kQuestionFormWeight), and the forms are stored, saved and loaded with the other vectors.
TEST_F(SelectionMemoryTest, QuestionFormsJoinTheScore) {
  const DatabaseTexts texts = database_texts(catalog, "hospital", CardOptions{});
  EXPECT_EQ(texts.question_forms,
            (std::vector<std::string>{"How many hospital are there?", "What are the name, city, beds of each hospital?",
                                      "How many doctor are there?", "What are the name, specialty of each doctor?"}));
  EXPECT_EQ(question_forms(Table{"t", {{"t_id", "INTEGER"}}, {}, 0}, nullptr),
            (std::vector<std::string>{"How many t are there?"}));  // ids are left out
  if (const WordNet* wordnet = WordNet::shared()) {  // and the same forms with the schema words' synonyms
    const std::vector<std::string> forms =
        question_forms(Table{"singer", {{"singer_id", "INTEGER"}, {"name", "TEXT"}}, {}, 0}, wordnet);
    EXPECT_EQ(forms, (std::vector<std::string>{"How many singer are there?", "What are the name of each singer?",
                                               "How many vocalist are there?", "What are the name of each vocalist?"}));
  }

  const SelectionOptions options = exact_options();
  SelectionMemory memory(encoder, options);
  const RowMatrix card = encoder->encode({"database clinic"});
  const RowMatrix tables = encoder->encode({"clinic staff"});
  const RowMatrix columns = encoder->encode({"clinic staff", "doctor specialty"});
  const RowMatrix forms = encoder->encode({"How many clinic are there?", "What are the staff of each clinic?"});
  memory.add_vectors("with_forms", card.data(), {"clinic"}, tables, nullptr, nullptr, &columns, {}, {}, &forms);
  memory.add_vectors("without_forms", card.data(), {"clinic"}, tables, nullptr, nullptr, &columns);
  EXPECT_EQ(memory.vectors("with_forms").forms.rows(), 2);
  EXPECT_EQ(memory.vectors("without_forms").forms.rows(), 0);
  const RowMatrix q = encoder->encode({"How many clinic are there?"});
  auto unit = [](const RowMatrix& m, int row) { return Eigen::RowVectorXf(m.row(row).normalized()); };
  const float best_column = std::max(unit(columns, 0).dot(unit(q, 0)), unit(columns, 1).dot(unit(q, 0)));
  auto score_of = [&](const SelectionMemory& m, const std::string& db) {
    for (const auto& match : m.select_vector(q.data(), 2))
      if (match.database == db) return match.score;
    return -100.0f;
  };
  // The same database but for its forms: the form the question repeats scores 1, the best column stands in without
  // (and the forms make it a little closer to the reference questions, its own forms).
  auto score_but_hubness = [&](const SelectionMemory& m, const std::string& db) {
    return score_of(m, db) + kHubnessWeight * hubness_of(m, db);
  };
  EXPECT_NEAR(score_but_hubness(memory, "with_forms") - score_but_hubness(memory, "without_forms"),
              kQuestionFormWeight * (1.0f - best_column), 1e-5);
  memory.save(dir.file("forms"));
  const SelectionMemory loaded = SelectionMemory::load(dir.file("forms"));
  EXPECT_NEAR(score_of(loaded, "with_forms"), score_of(memory, "with_forms"), 1e-6);
  const RowMatrix narrow = card.leftCols(7);  // rows of another width are refused
  EXPECT_THROW(memory.add_vectors("x", card.data(), {"clinic"}, tables, nullptr, nullptr, &columns, {}, {}, &narrow),
               Error);
  // A version 4 folder (before question forms) loads, its databases without forms.
  SelectionMemory old(encoder, options);
  old.add_vectors("without_forms", card.data(), {"clinic"}, tables, nullptr, nullptr, &columns);
  const std::string folder = dir.file("v4");
  old.save(folder);
  nlohmann::json manifest = read_manifest(folder);
  manifest["version"] = 4;
  manifest.erase("next_form_id");
  std::ofstream(folder + "/manifest.json") << manifest.dump();
  std::filesystem::remove(folder + "/forms.index");
  EXPECT_NEAR(score_but_hubness(SelectionMemory::load(folder), "without_forms"),
              score_but_hubness(memory, "without_forms"), 1e-6);
}

// A database close to questions about the others (here one whose schema mixes theirs) is a hub: its hubness, the
// mean of its whole-question score terms over the reference questions (every question form, as there are fewer than
// kHubnessReferences) minus the collection's average, is the highest, and the untrained score subtracts it.
TEST_F(SelectionMemoryTest, HubnessIsTheMeanScoreOfTheReferenceQuestions) {
  SelectionMemory memory(encoder, exact_options());
  struct Texts {
    std::string name, card, table;
    std::vector<std::string> columns, forms;
  };
  const std::vector<Texts> dbs = {
      {"clinic", "clinic doctor patient", "doctor patient", {"doctor name", "patient age"},
       {"How many doctor are there?", "What are the age of each patient?"}},
      {"flights", "flight airport airline", "flight route", {"airline name", "airport city"},
       {"How many flight are there?", "What are the city of each airport?"}},
      {"hub", "clinic doctor patient flight airport airline", "doctor flight", {"doctor name", "airline name"},
       {"How many doctor are there?", "How many flight are there?"}}};
  std::vector<std::string> references;
  for (const auto& db : dbs) {
    const RowMatrix card = encoder->encode({db.card}), table = encoder->encode({db.table});
    const RowMatrix columns = encoder->encode(db.columns), forms = encoder->encode(db.forms);
    memory.add_vectors(db.name, card.data(), {db.name}, table, nullptr, nullptr, &columns, {}, {}, &forms);
    references.insert(references.end(), db.forms.begin(), db.forms.end());
  }
  auto unit = [&](const std::string& text) { return Eigen::RowVectorXf(encoder->encode({text}).row(0).normalized()); };
  auto best = [&](const std::vector<std::string>& texts, const Eigen::RowVectorXf& r) {
    float out = -2.0f;
    for (const auto& t : texts) out = std::max(out, unit(t).dot(r));
    return out;
  };
  std::vector<double> expected;
  for (const auto& db : dbs) {
    double sum = 0.0;
    for (const auto& reference : references) {
      const Eigen::RowVectorXf r = unit(reference);
      sum += 0.5 * (unit(db.card).dot(r) + unit(db.table).dot(r)) + kColumnWeight * best(db.columns, r) +
             kQuestionFormWeight * best(db.forms, r);
    }
    expected.push_back(sum / static_cast<double>(references.size()));
  }
  const double average = (expected[0] + expected[1] + expected[2]) / 3.0;
  for (size_t i = 0; i < dbs.size(); ++i)
    EXPECT_NEAR(hubness_of(memory, dbs[i].name), expected[i] - average, 1e-5) << dbs[i].name;
  EXPECT_GT(hubness_of(memory, "hub"), hubness_of(memory, "clinic"));
  EXPECT_GT(hubness_of(memory, "hub"), hubness_of(memory, "flights"));

  // The question's score is the untrained one of its raw similarities, the hubness term included.
  const QuestionSimilarities found = memory.similarities({"How many doctor are there?"})[0];
  for (const auto& match : memory.select("How many doctor are there?", 3)) {
    const size_t i = static_cast<size_t>(
        std::find(found.databases.begin(), found.databases.end(), match.database) - found.databases.begin());
    EXPECT_NEAR(match.score, untrained_score(SimilarityFusion::Mean, found.raw.at(i), false), 1e-5);
  }
  // Loading keeps it; removing the hub measures the rest again, among themselves.
  memory.save(dir.file("hubness"));
  EXPECT_NEAR(hubness_of(SelectionMemory::load(dir.file("hubness")), "hub"), hubness_of(memory, "hub"), 1e-6);
  memory.remove("hub");
  EXPECT_NEAR(hubness_of(memory, "clinic") + hubness_of(memory, "flights"), 0.0f, 1e-6);
  EXPECT_NE(hubness_of(memory, "clinic"), expected[0] - average);
}

// A question word meets the columns as well as its best WordNet synonym does (at kSynonymWeight): "vocalist"
// through "singer".
TEST_F(SelectionMemoryTest, SynonymsStandInForWordsThatMeetNoColumn) {
  const WordNet* wordnet = WordNet::shared();
  if (!wordnet) GTEST_SKIP() << "WordNet is not installed";
  const std::vector<std::string> synonyms = wordnet->synonyms("vocalist");
  ASSERT_FALSE(synonyms.empty());
  ASSERT_EQ(synonyms[0], "singer");
  const RowMatrix card = encoder->encode({"database music"});
  const RowMatrix tables = encoder->encode({"singer"});
  const RowMatrix columns = encoder->encode({"singer", "song title"});
  auto score = [&](bool with_synonyms) {
    SelectionMemory memory(encoder, exact_options(with_synonyms));
    memory.add_vectors("music", card.data(), {"singer"}, tables, nullptr, nullptr, &columns);
    return memory.select("vocalist", 1)[0].score;
  };
  RowMatrix words = encoder->encode({"vocalist", "singer"}), column_rows = columns;
  words.rowwise().normalize();
  column_rows.rowwise().normalize();
  const Eigen::VectorXf best = (words * column_rows.transpose()).rowwise().maxCoeff();
  ASSERT_GT(kSynonymWeight * best(1), best(0));
  // Added from vectors, the columns count as one table: both word-column terms move by the same amount.
  EXPECT_NEAR(score(true) - score(false),
              (kWordColumnWeight + kTableWordColumnWeight) * (kSynonymWeight * best(1) - best(0)), 1e-5);
}

