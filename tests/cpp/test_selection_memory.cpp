// Selection memory on a small generated collection: ranking, probabilities, set selection, calibration,
// build with progress, refresh after the files change, add/remove without a rebuild, save/load (also of version 1
// and 3 folders), candidate narrowing, and clear errors on bad folders and models.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "../../cpp/src/common/atomic_folder.hpp"
#include "../../cpp/src/memories/selection/database_list_file.hpp"
#include "counting_encoder.hpp"
#include "selection_memory_fixture.hpp"

using namespace relmem;
using namespace relmem_test;

namespace {

// The manifest's database list of folders before version 4, from a version 4 folder's databases.bin.
nlohmann::json version_three_database_list(const std::string& folder) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& db : load_database_list(folder + "/databases.bin")) {
    list.push_back({{"name", db.name}, {"id", db.id}, {"first_table", db.first_table}, {"tables", db.tables},
                    {"first_column", db.first_column}, {"columns", db.columns}, {"description", db.description},
                    {"examples", db.examples}, {"path", db.path}, {"size", db.size}, {"mtime_ns", db.mtime_ns}});
  }
  return list;
}

}  // namespace

TEST_F(SelectionMemoryTest, SelectsTheRightDatabaseWithProbabilities) {
  const auto memory = SelectionMemory::build(catalog, encoder);
  EXPECT_EQ(memory.size(), 4u);
  EXPECT_EQ(memory.tables("hospital"), (std::vector<std::string>{"hospital", "doctor"}));  // schema order
  const auto matches = memory.select("Which doctors work at the hospital with the most beds?", 3);
  ASSERT_EQ(matches.size(), 3u);
  EXPECT_EQ(matches[0].database, "hospital");
  for (size_t i = 0; i < matches.size(); ++i) {
    EXPECT_GT(matches[i].probability, 0.0f);
    EXPECT_LT(matches[i].probability, 1.0f);
    if (i) EXPECT_GE(matches[i - 1].score, matches[i].score);
  }
  EXPECT_EQ(memory.select("flights from airport BOS by airline", 1)[0].database, "flights");
  EXPECT_EQ(memory.select("concert in stadium capacity", 10).size(), 4u);  // k larger than the collection
  EXPECT_THROW(memory.select("x", 0), Error);
}

// An encoder call has a cost of its own (USE-lite streams all its weights), so a question and the words of it that
// were never seen are encoded in one call; seen words come from the cache, and the ranking is the same either way.
TEST_F(SelectionMemoryTest, AQuestionAndItsNewWordsAreEncodedInOneCall) {
  auto counting = std::make_shared<relmem_test::CountingEncoder>();
  const SelectionMemory memory = SelectionMemory::build(catalog, counting);
  const std::string question = "Which doctors work in the hospitals of Boston?";
  size_t calls = counting->calls, texts = counting->encoded;
  const std::vector<DatabaseMatch> first = memory.select(question, 4);
  EXPECT_EQ(counting->calls, calls + 1);
  EXPECT_GT(counting->encoded, texts + 1);  // the question and its words
  calls = counting->calls;
  texts = counting->encoded;
  const std::vector<DatabaseMatch> again = memory.select(question, 4);
  EXPECT_EQ(counting->calls, calls + 1);
  EXPECT_EQ(counting->encoded, texts + 1);  // the question alone
  ASSERT_EQ(names(first), names(again));
  EXPECT_EQ(names(first)[0], "hospital");
  for (size_t i = 0; i < first.size(); ++i) EXPECT_FLOAT_EQ(first[i].score, again[i].score);
}

TEST_F(SelectionMemoryTest, GivenPartsRankLikeMarkedParts) {
  const auto memory = SelectionMemory::build(catalog, encoder);
  const std::vector<std::string> parts = {"Which doctors work at the hospital with the most beds?",
                                          "Which airline flies from airport BOS?"};
  const auto given = memory.select_parts(parts, 4);
  const auto marked = memory.select("Q1: " + parts[0] + "; Q2: " + parts[1], 4);
  ASSERT_EQ(given.size(), 4u);
  EXPECT_EQ(names(given), names(marked));
  for (size_t i = 0; i < given.size(); ++i) EXPECT_FLOAT_EQ(given[i].score, marked[i].score);
  const std::vector<std::string> top2 = {names(given)[0], names(given)[1]};
  EXPECT_TRUE((top2 == std::vector<std::string>{"hospital", "flights"}) ||
              (top2 == std::vector<std::string>{"flights", "hospital"}));
  // One part is a question of its own, and given parts are not split again.
  EXPECT_EQ(names(memory.select_parts({parts[0]}, 2)), names(memory.select(parts[0], 2)));
  const std::string two_sentences = "How many doctors are there? List flights by airline United.";
  EXPECT_EQ(names(memory.select_parts({"", two_sentences, " "}, 3)),
            names(memory.select_parts({two_sentences}, 3)));
  EXPECT_THROW(memory.select_parts({}, 3), Error);
  EXPECT_THROW(memory.select_parts({"  "}, 3), Error);
  EXPECT_THROW(memory.select_parts(parts, 0), Error);
  EXPECT_EQ(memory.select_parts_batch({parts, {parts[1]}}, 4)[0].size(), 4u);
  const auto set = memory.select_set_parts(parts);  // at least each part's best
  const auto marked_set = memory.select_set("Q1: " + parts[0] + "; Q2: " + parts[1]);
  EXPECT_EQ(names(set), names(marked_set));
  EXPECT_GE(set.size(), 2u);
  EXPECT_THROW(memory.select_set_parts({""}), Error);
}

TEST_F(SelectionMemoryTest, UntrainedCalibrationIsTheEncodersFit) {
  const auto use_lite = SelectionMemory::untrained_calibration("use-lite");
  const auto minilm = SelectionMemory::untrained_calibration("minilm");
  EXPECT_NE(use_lite.scale, minilm.scale);
  EXPECT_NE(use_lite.bias, minilm.bias);
  const auto fine_tuned = SelectionMemory::untrained_calibration("minilm:/models/minilm-fine-tuned");
  EXPECT_EQ(fine_tuned.scale, minilm.scale);
  EXPECT_EQ(fine_tuned.bias, minilm.bias);
  auto memory = SelectionMemory::build(catalog, encoder);  // hashing: no fit of its own
  EXPECT_EQ(memory.calibration().scale, use_lite.scale);
  EXPECT_EQ(memory.calibration().lead, use_lite.lead);
  EXPECT_EQ(memory.calibration().bias, use_lite.bias);
}

TEST_F(SelectionMemoryTest, SetSelectionAndCalibration) {
  auto memory = SelectionMemory::build(catalog, encoder);
  EXPECT_FALSE(memory.calibration().fitted);
  const std::vector<LabeledQuestion> heldout = {
      {"Which doctor has the specialty cardiology?", {"hospital"}},
      {"How many beds does each hospital have?", {"hospital"}},
      {"List flights by airline United", {"flights"}},
      {"Which airport is in Boston?", {"flights"}},
      {"Which concert was in the stadium with the largest capacity?", {"concert_singer"}},
      {"What is the population of each city and state?", {"world_cities"}},
      {"How many doctors are there? How many flights are there?", {"hospital", "flights"}},
  };
  const SetMetrics metrics = memory.calibrate(heldout);
  EXPECT_TRUE(memory.calibration().fitted);
  EXPECT_GT(memory.calibration().scale, 0.0f);
  EXPECT_GE(memory.calibration().threshold, 0.0f);
  EXPECT_LE(memory.calibration().threshold, 1.0f);
  EXPECT_GT(metrics.f1, 0.5);
  const auto set = memory.select_set("How many beds does each hospital have?");
  ASSERT_FALSE(set.empty());
  EXPECT_EQ(set[0].database, "hospital");
  for (const auto& m : set) EXPECT_GE(m.probability, set.size() > 1 ? memory.calibration().threshold : 0.0f);
  EXPECT_THROW(memory.calibrate({{"q", {"nowhere"}}}), Error);
  EXPECT_THROW(memory.calibrate({}), Error);
}

TEST_F(SelectionMemoryTest, AddAndRemoveWithoutRebuild) {
  auto memory = SelectionMemory::build(catalog, encoder);
  const auto before = memory.select("doctor specialty hospital beds", 4);
  EXPECT_TRUE(memory.remove("hospital"));
  EXPECT_FALSE(memory.remove("hospital"));
  EXPECT_FALSE(memory.contains("hospital"));
  for (const auto& m : memory.select("doctor specialty hospital beds", 4)) EXPECT_NE(m.database, "hospital");
  memory.add(catalog, "hospital", "Hospitals and their doctors");
  const auto after = memory.select("doctor specialty hospital beds", 4);
  EXPECT_EQ(after[0].database, "hospital");
  EXPECT_EQ(names(after).size(), names(before).size());
  memory.add(catalog, "hospital");  // re-adding replaces, it does not duplicate
  EXPECT_EQ(memory.size(), 4u);
  EXPECT_THROW(memory.add(catalog, "no_such_db"), Error);
}

TEST_F(SelectionMemoryTest, BuildReportsProgressAndEncodesLikeAddingOneByOne) {
  std::vector<std::pair<std::string, size_t>> calls;
  auto memory = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, {},
                                       [&](const std::string& db, size_t done, size_t total) {
                                         EXPECT_EQ(total, 4u);
                                         calls.emplace_back(db, done);
                                       });
  const std::vector<std::pair<std::string, size_t>> expected = {
      {"concert_singer", 1}, {"flights", 2}, {"hospital", 3}, {"world_cities", 4}};
  EXPECT_EQ(calls, expected);
  EXPECT_GT(memory.memory_bytes(), 4u * 256u * sizeof(float));
  SelectionMemory one_by_one(encoder);
  for (const auto& db : catalog.databases()) one_by_one.add(catalog, db);
  const auto batched = memory.select("doctor specialty hospital beds", 4);
  const auto single = one_by_one.select("doctor specialty hospital beds", 4);
  ASSERT_EQ(batched.size(), single.size());
  for (size_t i = 0; i < batched.size(); ++i) {
    EXPECT_EQ(batched[i].database, single[i].database);
    EXPECT_FLOAT_EQ(batched[i].score, single[i].score);
  }
}

TEST_F(SelectionMemoryTest, RefreshFollowsTheDatabaseFiles) {
  auto memory = SelectionMemory::build(catalog, encoder, nullptr, {{"hospital", "Hospitals and their doctors"}});
  memory.save(dir.file("saved"));
  auto loaded = SelectionMemory::load(dir.file("saved"));
  RefreshReport report = loaded.refresh(catalog);
  EXPECT_EQ(report.unchanged, 4);
  EXPECT_TRUE(report.added.empty() && report.updated.empty() && report.removed.empty());

  relmem_test::make_database(dir.file("dbs/zoo.sqlite"), "CREATE TABLE animal (name TEXT, species TEXT);");
  std::filesystem::remove(dir.file("dbs/flights.sqlite"));
  std::filesystem::remove(dir.file("dbs/hospital.sqlite"));
  relmem_test::make_database(dir.file("dbs/hospital.sqlite"), kHospitalScript);
  // A modification time of its own, whatever the clock's resolution.
  std::filesystem::last_write_time(dir.file("dbs/hospital.sqlite"), std::filesystem::file_time_type{});
  std::vector<std::string> rebuilt;
  report = loaded.refresh(Catalog::open(dir.file("dbs")),
                          [&](const std::string& db, size_t, size_t) { rebuilt.push_back(db); });
  EXPECT_EQ(report.added, std::vector<std::string>{"zoo"});
  EXPECT_EQ(report.updated, std::vector<std::string>{"hospital"});
  EXPECT_EQ(report.removed, std::vector<std::string>{"flights"});
  EXPECT_EQ(report.unchanged, 2);
  EXPECT_EQ(rebuilt, (std::vector<std::string>{"hospital", "zoo"}));
  EXPECT_EQ(loaded.databases(), (std::vector<std::string>{"concert_singer", "hospital", "world_cities", "zoo"}));
  // The re-embedded database kept its description.
  const auto fresh = SelectionMemory::build(Catalog::open(dir.file("dbs")), encoder, nullptr,
                                            {{"hospital", "Hospitals and their doctors"}});
  EXPECT_FLOAT_EQ(loaded.select("hospitals", 1)[0].score, fresh.select("hospitals", 1)[0].score);
}

TEST_F(SelectionMemoryTest, DescriptionsAndExamplesChangeTheCard) {
  const auto plain = SelectionMemory::build(catalog, encoder);
  const auto described = SelectionMemory::build(
      catalog, encoder, nullptr, {{"world_cities", "Metropolitan areas, mayors and municipal statistics"}},
      {{"world_cities", {"Who is the mayor of the largest metropolitan area?"}}});
  const std::string q = "Who is the mayor of the largest metropolitan area?";
  EXPECT_GT(described.select(q, 4)[0].score, plain.select(q, 4)[0].score);
  EXPECT_EQ(described.select(q, 1)[0].database, "world_cities");
  EXPECT_THROW(SelectionMemory::build(catalog, encoder, nullptr, {{"nowhere", "x"}}), Error);
}

TEST_F(SelectionMemoryTest, SaveAndLoadRoundTrip) {
  auto memory = SelectionMemory::build(catalog, encoder, small_model("hashing:256", 256), {{"hospital", "Doctors"}});
  memory.remove("flights");
  memory.add(catalog, "flights");
  const std::string folder = dir.file("memory");
  memory.save(folder);
  EXPECT_TRUE(std::filesystem::exists(folder + "/manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(folder + "/relevance.model"));
  const auto loaded = SelectionMemory::load(folder);  // encoder reloaded by name
  EXPECT_EQ(loaded.encoder().name(), "hashing:256");
  EXPECT_EQ(loaded.databases(), memory.databases());
  ASSERT_NE(loaded.model(), nullptr);
  EXPECT_FLOAT_EQ(loaded.calibration().threshold, 0.6f);
  for (const std::string q : {"doctor at hospital", "flights from BOS", "city population", "Where is Mercy General?"}) {
    const auto a = memory.select(q, 4), b = loaded.select(q, 4);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].database, b[i].database);
      EXPECT_NEAR(a[i].probability, b[i].probability, 1e-6);
    }
  }
  // The loaded memory keeps working incrementally.
  auto again = SelectionMemory::load(folder);
  again.remove("hospital");
  again.add(catalog, "hospital");
  EXPECT_EQ(again.select("doctor specialty hospital", 1)[0].database, "hospital");
}

TEST_F(SelectionMemoryTest, BadFoldersAndModelsGiveClearErrors) {
  auto expect_error = [](const std::function<void()>& f, const std::string& fragment) {
    try {
      f();
      FAIL() << "expected relmem::Error containing '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto memory = SelectionMemory::build(catalog, encoder, small_model("hashing:256", 256));
  const std::string folder = dir.file("memory");
  memory.save(folder);
  expect_error([&] { SelectionMemory::load(dir.file("nowhere")); }, "no selection memory");
  expect_error([&] { SelectionMemory::load(folder, std::make_shared<HashingEncoder>(128)); }, "hashing:256");
  // A model trained for another encoder, or another dimension.
  expect_error([&] { memory.set_model(small_model("use-lite", 256)); }, "trained with encoder 'use-lite'");
  expect_error([&] { memory.set_model(small_model("hashing:256", 128)); }, "expects 128-d");
  // Damaged files.
  const std::string model_bytes = relmem_test::read_bytes(folder + "/relevance.model");
  std::string flipped = model_bytes;
  flipped[model_bytes.size() / 2] ^= 0x10;
  relmem_test::write_bytes(folder + "/relevance.model", flipped);
  expect_error([&] { SelectionMemory::load(folder); }, "corrupt");
  relmem_test::write_bytes(folder + "/relevance.model", model_bytes);
  const std::string manifest = relmem_test::read_bytes(folder + "/manifest.json");
  relmem_test::write_bytes(folder + "/manifest.json", manifest.substr(0, manifest.size() / 2));
  expect_error([&] { SelectionMemory::load(folder); }, "not valid JSON");
  std::string newer = manifest;
  newer.replace(newer.find("\"version\": 5"), 12, "\"version\": 7");
  relmem_test::write_bytes(folder + "/manifest.json", newer);
  expect_error([&] { SelectionMemory::load(folder); }, "version 7");
  relmem_test::write_bytes(folder + "/manifest.json", manifest);
  for (const std::string name : {"databases.bin", "lexical_tables.sparse", "values.postings"}) {
    const std::string bytes = relmem_test::read_bytes(folder + "/" + name);
    std::string damaged = bytes;
    damaged[12] ^= 0x04;  // in the header of every one of them
    relmem_test::write_bytes(folder + "/" + name, damaged);
    expect_error([&] { SelectionMemory::load(folder); }, name);
    relmem_test::write_bytes(folder + "/" + name, bytes);
  }
  const std::string forms = relmem_test::read_bytes(folder + "/forms.index");
  std::filesystem::remove(folder + "/forms.index");
  expect_error([&] { SelectionMemory::load(folder); }, "forms.index");
  relmem_test::write_bytes(folder + "/forms.index", forms.substr(0, forms.size() - 1));
  expect_error([&] { SelectionMemory::load(folder); }, "forms.index");
  relmem_test::write_bytes(folder + "/forms.index", forms);
  std::filesystem::remove(folder + "/values.postings");
  expect_error([&] { SelectionMemory::load(folder); }, "values.postings");
  std::filesystem::remove(folder + "/tables.index");
  expect_error([&] { SelectionMemory::load(folder); }, "tables.index");
}

TEST_F(SelectionMemoryTest, NarrowedCandidatesAgreeWithFullScoring) {
  SelectionOptions narrow;
  narrow.candidates = 1;  // 1 card + 4 table hits per question instead of everything
  for (auto model : {std::shared_ptr<RelevanceModel>(), small_model("hashing:256", 256)}) {
    const auto full = SelectionMemory::build(catalog, encoder, model);
    const auto few = SelectionMemory::build(catalog, encoder, model, {}, {}, narrow);
    for (const std::string q : {"doctor at hospital", "flights from BOS airport", "concert stadium capacity"}) {
      const auto a = full.select(q, 1), b = few.select(q, 1);
      EXPECT_EQ(a[0].database, b[0].database);
      // A model also reads where the database stands among the candidates (its word lead over the others, its
      // ranks: relevance_model.hpp), which narrowing the candidates may change; the untrained score reads none.
      if (!model) EXPECT_NEAR(a[0].score, b[0].score, 1e-5);
    }
  }
}

TEST_F(SelectionMemoryTest, PoolOfQuantizedCardsAgreesWithFullScoring) {
  SelectionOptions pooled;
  pooled.candidates = 1;
  pooled.pool = 2;  // of 4 databases: the approximate card pass keeps 2, scored exactly
  const auto full = SelectionMemory::build(catalog, encoder);
  auto few = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, pooled);
  for (const std::string q : {"doctor at hospital", "flights from BOS airport", "concert stadium capacity"}) {
    const auto a = full.select(q, 1), b = few.select(q, 4);
    EXPECT_EQ(b.size(), 2u);  // only the pool is ranked
    EXPECT_EQ(a[0].database, b[0].database);
    // Exact cosines for the pool; its lexical ones read row by row, the full memory's through postings. Above the
    // pool no hubness is measured.
    EXPECT_NEAR(a[0].score + kHubnessWeight * hubness_of(full, a[0].database), b[0].score, 1e-6);
    EXPECT_EQ(hubness_of(few, b[0].database, q), 0.0f);
  }
  // The pool follows adds and removes, and survives save / load.
  few.remove("hospital");
  EXPECT_NE(few.select("doctor at hospital", 1)[0].database, "hospital");
  few.add(catalog, "hospital");
  EXPECT_EQ(few.select("doctor at hospital", 1)[0].database, "hospital");
  few.save(dir.file("pooled"));
  const auto loaded = SelectionMemory::load(dir.file("pooled"));
  EXPECT_EQ(loaded.options().pool, 2);
  EXPECT_EQ(loaded.select("doctor at hospital", 4).size(), 2u);
  EXPECT_EQ(loaded.select("flights from BOS airport", 1)[0].database, "flights");
  SelectionOptions bad;
  bad.pool = bad.candidates - 1;
  EXPECT_THROW(SelectionMemory(encoder, bad), Error);
}

TEST_F(SelectionMemoryTest, PrecomputedVectors) {
  SelectionOptions options;
  options.lexical_encoder = "hashing:64";
  SelectionMemory memory(encoder, options);
  const HashingEncoder lexical(64);
  const std::vector<std::string> hospital = {"database hospital doctor", "hospital beds", "doctor specialty"};
  const RowMatrix rows = encoder->encode(hospital), lexical_rows = lexical.encode(hospital);
  const RowMatrix tables = rows.bottomRows(2), lexical_tables = lexical_rows.bottomRows(2);
  memory.add_vectors("hospital", rows.data(), {"hospital", "doctor"}, tables, lexical_rows.data(), &lexical_tables);
  const RowMatrix other = encoder->encode({"database flights airport"});
  const RowMatrix other_lexical = lexical.encode({"database flights airport"});
  const RowMatrix none(0, 64);
  memory.add_vectors("flights", other.data(), {}, RowMatrix(0, 256), other_lexical.data(), &none);  // card only
  EXPECT_EQ(memory.select("doctor specialty", 2)[0].database, "hospital");
  EXPECT_EQ(memory.select("flights airport", 2)[0].database, "flights");
  const RowMatrix q = encoder->encode({"doctor specialty"}), q_lexical = lexical.encode({"doctor specialty"});
  EXPECT_EQ(memory.select_vector(q.data(), 1, q_lexical.data())[0].database, "hospital");
  EXPECT_THROW(memory.select_vector(q.data(), 1), Error);  // the lexical vector is missing
  EXPECT_THROW(memory.add_vectors("x", rows.data(), {"a"}, RowMatrix(2, 256), lexical_rows.data(), &lexical_tables),
               Error);
  EXPECT_THROW(memory.add_vectors("x", rows.data(), {"a", "b"}, tables), Error);  // no lexical rows
  EXPECT_THROW(memory.add_vectors("", rows.data(), {}, RowMatrix(0, 256), lexical_rows.data(), &none), Error);
}

TEST_F(SelectionMemoryTest, WorksWithoutTheLexicalChannel) {
  SelectionOptions options;
  options.lexical_encoder = "";
  const auto memory = SelectionMemory::build(catalog, encoder, nullptr, {}, {}, options);
  EXPECT_EQ(memory.lexical_encoder(), nullptr);
  EXPECT_EQ(memory.select("doctor specialty hospital beds", 1)[0].database, "hospital");
  const std::string folder = dir.file("plain");
  memory.save(folder);
  EXPECT_FALSE(std::filesystem::exists(folder + "/lexical_cards.sparse"));
  EXPECT_EQ(SelectionMemory::load(folder).select("doctor specialty hospital beds", 1)[0].database, "hospital");
  // A model trained with a lexical encoder does not fit a memory without one.
  auto copy = SelectionMemory::load(folder);
  EXPECT_THROW(copy.set_model(small_model("hashing:256", 256)), Error);
}

TEST_F(SelectionMemoryTest, LoadsVersionOneFolders) {
  const auto memory = SelectionMemory::build(catalog, encoder);
  const std::string folder = dir.file("v1");
  memory.save(folder);
  // A version 1 folder: no columns, no values, no column fields.
  nlohmann::json manifest = read_manifest(folder);
  manifest["version"] = 1;
  manifest["options"].erase("values_per_column");
  manifest.erase("next_column_id");
  manifest["databases"] = version_three_database_list(folder);
  for (auto& db : manifest["databases"]) {
    db.erase("first_column");
    db.erase("columns");
  }
  std::ofstream(folder + "/manifest.json") << manifest.dump();
  std::filesystem::remove(folder + "/columns.index");
  std::filesystem::remove(folder + "/values.postings");
  auto loaded = SelectionMemory::load(folder);
  EXPECT_EQ(loaded.options().values_per_column, 0);
  EXPECT_EQ(loaded.select("doctor specialty hospital beds", 1)[0].database, "hospital");
  loaded.remove("hospital");  // and it keeps working incrementally
  loaded.add(catalog, "hospital");
  EXPECT_EQ(loaded.select("doctor specialty hospital beds", 1)[0].database, "hospital");
  manifest["version"] = 3;
  std::ofstream(folder + "/manifest.json") << manifest.dump();
  EXPECT_THROW(SelectionMemory::load(folder), Error);
}

// A version 3 folder keeps its stored values in values.json, checked against the manifest's checksum.
TEST_F(SelectionMemoryTest, LoadsVersionThreeFolders) {
  SelectionMemory memory(encoder);
  const RowMatrix card = encoder->encode({"database clinic"});
  const RowMatrix tables = encoder->encode({"clinic staff"});
  HashingEncoder lexical(4096);
  const RowMatrix lexical_card = lexical.encode({"database clinic"}), lexical_tables = lexical.encode({"clinic staff"});
  memory.add_vectors("with_values", card.data(), {"clinic"}, tables, lexical_card.data(), &lexical_tables, nullptr,
                     {"mercy general"});
  memory.add_vectors("without_values", card.data(), {"clinic"}, tables, lexical_card.data(), &lexical_tables);
  const std::string folder = dir.file("v3");
  memory.save(folder);
  nlohmann::json manifest = read_manifest(folder);
  const std::string values = R"({"with_values": ["mercy general"], "without_values": []})";
  relmem_test::write_bytes(folder + "/values.json", values);
  std::filesystem::remove(folder + "/values.postings");
  manifest["version"] = 3;
  manifest["checksums"] = {{"values.json", content_checksum(values)}};
  manifest["databases"] = version_three_database_list(folder);
  std::filesystem::remove(folder + "/databases.bin");
  std::ofstream(folder + "/manifest.json") << manifest.dump();
  const std::string question = "doctors at Mercy General";
  const auto loaded = SelectionMemory::load(folder);
  const auto want = memory.select(question, 2), got = loaded.select(question, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].database, "with_values");
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(got[i].score, want[i].score, 1e-6);
  relmem_test::write_bytes(folder + "/values.json", R"({"with_values": ["mercy generaL"], "without_values": []})");
  try {
    SelectionMemory::load(folder);
    ADD_FAILURE() << "loaded a changed values.json";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
  }
}

// A memory large enough that its column and lexical files are opened without reading their rows (256 KiB or more)
// answers as the memory it was saved from, and keeps doing so after it changes (the rows are then copied in) and is
// saved and opened again.
TEST(SelectionMemoryFiles, LargeMemoriesAnswerAlikeWhenOpenedChangedAndSavedAgain) {
  auto encoder = std::make_shared<HashingEncoder>(256);
  HashingEncoder lexical(4096);
  SelectionMemory memory(encoder);
  const std::vector<std::string> topics = {"singer concert stadium", "doctor hospital patient", "flight airport pilot",
                                           "student course teacher", "city country population", "movie actor film"};
  auto add = [&](SelectionMemory& target, int i) {
    const std::string topic = topics[static_cast<size_t>(i) % topics.size()] + " " + std::to_string(i);
    std::vector<std::string> table_texts, column_texts;
    for (int t = 0; t < 5; ++t) table_texts.push_back(topic + " table " + std::to_string(t));
    for (int c = 0; c < 30; ++c) column_texts.push_back(topic + " column " + std::to_string(c));
    const RowMatrix card = encoder->encode({topic}), tables = encoder->encode(table_texts);
    const RowMatrix columns = encoder->encode(column_texts);
    const RowMatrix lexical_card = lexical.encode({topic}), lexical_tables = lexical.encode(table_texts);
    std::vector<std::string> names;
    for (int t = 0; t < 5; ++t) names.push_back("t" + std::to_string(t));
    target.add_vectors("db" + std::to_string(i), card.data(), names, tables, lexical_card.data(), &lexical_tables,
                       &columns, {"value " + std::to_string(i), "shared"});
  };
  for (int i = 0; i < 200; ++i) add(memory, i);
  relmem_test::TempDir dir;
  memory.save(dir.file("m"));
  EXPECT_GE(std::filesystem::file_size(dir.file("m/columns.index")), 256u << 10);
  EXPECT_GE(std::filesystem::file_size(dir.file("m/lexical_tables.sparse")), 256u << 10);
  const std::vector<std::string> questions = {"doctor hospital 7", "which pilot flies from airport 14",
                                              "value 33 in the movie table", "singer concert 120"};
  auto expect_alike = [&](const SelectionMemory& a, const SelectionMemory& b) {
    for (const auto& question : questions) {
      const auto want = a.select(question, 5), got = b.select(question, 5);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].database, want[i].database) << question;
        EXPECT_NEAR(got[i].score, want[i].score, 1e-5) << question;
      }
    }
  };
  SelectionMemory opened = SelectionMemory::load(dir.file("m"));
  expect_alike(memory, opened);
  EXPECT_EQ(opened.vectors("db5").values, (std::vector<std::string>{"shared", "value 5"}));
  for (SelectionMemory* m : {&memory, &opened}) {
    m->remove("db7");
    add(*m, 200);
  }
  expect_alike(memory, opened);
  opened.save(dir.file("again"));
  expect_alike(memory, SelectionMemory::load(dir.file("again")));
}
