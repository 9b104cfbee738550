#pragma once
// The selection memory tests' collection: four small SQLite databases in a temporary folder, a hashing encoder,
// and the helpers several test files share.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "test_util.hpp"

namespace relmem_test {

using namespace relmem;

inline const char* kHospitalScript = R"sql(
  CREATE TABLE hospital (id INTEGER PRIMARY KEY, name TEXT, city TEXT, beds INTEGER);
  CREATE TABLE doctor (id INTEGER PRIMARY KEY, name TEXT, specialty TEXT, hospital_id INTEGER REFERENCES hospital(id));
  INSERT INTO hospital VALUES (1, 'Mercy General', 'Boston', 300), (2, 'St. Mary Memorial', 'Chicago', 120);
  INSERT INTO doctor VALUES (1, 'Ann Lee', 'cardiology', 1), (2, 'Raj Patel', 'pediatrics', 2);
)sql";
inline const char* kFlightsScript = R"sql(
  CREATE TABLE airport (code TEXT PRIMARY KEY, airport_name TEXT, city TEXT);
  CREATE TABLE flight (flight_id INTEGER PRIMARY KEY, origin TEXT, destination TEXT, airline TEXT);
  INSERT INTO airport VALUES ('BOS', 'Logan International', 'Boston'), ('ORD', 'O''Hare', 'Chicago');
  INSERT INTO flight VALUES (1, 'BOS', 'ORD', 'United'), (2, 'ORD', 'BOS', 'Delta');
)sql";
inline const char* kCitiesScript = R"sql(
  CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT, state TEXT, population INTEGER);
  INSERT INTO city VALUES (1, 'Boston', 'MA', 675647), (2, 'Chicago', 'IL', 2746388);
)sql";

// A saved memory's manifest.json.
inline nlohmann::json read_manifest(const std::string& folder) {
  nlohmann::json manifest;
  std::ifstream(folder + "/manifest.json") >> manifest;
  return manifest;
}

class SelectionMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("dbs/concert_singer.sqlite"), relmem_test::kConcertScript);
    relmem_test::make_database(dir.file("dbs/hospital.sqlite"), kHospitalScript);
    relmem_test::make_database(dir.file("dbs/flights.sqlite"), kFlightsScript);
    relmem_test::make_database(dir.file("dbs/world_cities.sqlite"), kCitiesScript);
    catalog = Catalog::open(dir.file("dbs"));
  }
  std::shared_ptr<const Encoder> encoder = std::make_shared<HashingEncoder>(256);
  relmem_test::TempDir dir;
  Catalog catalog;
};

inline std::vector<std::string> names(const std::vector<DatabaseMatch>& matches) {
  std::vector<std::string> out;
  for (const auto& m : matches) out.push_back(m.database);
  return out;
}

inline std::shared_ptr<RelevanceModel> small_model(const std::string& encoder_name, int dim) {
  RelevanceConfig config;
  config.input_dim = dim;
  config.projection_dim = 32;
  config.hidden_dim = 4;
  config.encoder = encoder_name;
  config.lexical_encoder = "hashing:4096";
  auto model = std::make_shared<RelevanceModel>(config, 1);
  model->parameters().scalar_weights().setConstant(10.0f);  // ranks like the untrained fusion, as a fixture
  model->set_threshold(0.6f);
  return model;
}

// The sentence encoder alone (no lexical channel) with exact column and table cosines (the int8 default is within
// 1/127 of them), and question words without their WordNet synonyms unless asked.
inline SelectionOptions exact_options(bool synonyms = false) {
  SelectionOptions options;
  options.lexical_encoder = "";
  options.column_dtype = "fp32";  // the question forms are stored as the columns are
  options.table_dtype = "fp32";
  options.synonyms = synonyms;
  return options;
}

// The database's RawSimilarities::hubness in the memory (the same for every question that has it as a candidate).
inline float hubness_of(const SelectionMemory& memory, const std::string& db,
                        const std::string& question = "any question") {
  const QuestionSimilarities found = memory.similarities({question})[0];
  for (size_t i = 0; i < found.databases.size(); ++i)
    if (found.databases[i] == db) return found.raw[i].hubness;
  throw Error("no candidate " + db);
}

}  // namespace relmem_test
