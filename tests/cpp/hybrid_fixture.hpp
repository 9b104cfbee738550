#pragma once
// Small databases for the hybrid tests: an "original" with every column and a "curated" copy with the facts an
// LLM must supply removed (heroes' eye colour and nationality, their powers), as SWAN builds its databases.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "relmem/evaluation/oracle_filler.hpp"
#include "relmem/hybrid/filler.hpp"
#include "relmem/hybrid/hybrid_session.hpp"
#include "relmem/llm/metered_llm.hpp"

namespace relmem::hybrid {

using evaluation::OracleFiller;
using evaluation::OracleOptions;
using evaluation::OracleSource;

inline void run_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, ("BEGIN;" + sql + ";COMMIT;").c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

class HybridFixture : public ::testing::Test {
 protected:
  static constexpr int kHeroes = 60;

  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("relmem_hybrid_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    original_ = (folder_ / "original.sqlite").string();
    curated_ = (folder_ / "curated.sqlite").string();
    store_path_ = (folder_ / "fills.sqlite").string();
    const std::string lookup =
        "CREATE TABLE colour (id INTEGER PRIMARY KEY, colour TEXT);"
        "INSERT INTO colour VALUES (1, 'Blue'), (2, 'Brown'), (3, 'Green');"
        "CREATE TABLE superpower (id INTEGER PRIMARY KEY, power_name TEXT);"
        "INSERT INTO superpower VALUES (1, 'Flight'), (2, 'Agility'), (3, 'Super Strength');";
    std::string heroes_full, heroes_curated, powers;
    for (int i = 1; i <= kHeroes; ++i) {
      const std::string name = "'Hero " + std::to_string(i) + "'";
      const std::string nationality = i % 3 == 0 ? "'German'" : i % 3 == 1 ? "'British'" : "'French'";
      heroes_full += "INSERT INTO superhero VALUES (" + std::to_string(i) + ", " + name + ", " + std::to_string(150 + i) +
                     ", " + std::to_string(1 + i % 3) + ", " + nationality + ");";
      heroes_curated += "INSERT INTO superhero VALUES (" + std::to_string(i) + ", " + name + ", " +
                        std::to_string(150 + i) + ");";
      powers += "INSERT INTO hero_power VALUES (" + std::to_string(i) + ", " + std::to_string(1 + i % 3) + ");";
      if (i % 2 == 0) powers += "INSERT INTO hero_power VALUES (" + std::to_string(i) + ", " + std::to_string(1 + (i + 1) % 3) + ");";
    }
    run_sql(original_, lookup +
                           "CREATE TABLE superhero (id INTEGER PRIMARY KEY, superhero_name TEXT, height_cm INTEGER,"
                           " eye_colour_id INTEGER REFERENCES colour(id), nationality TEXT);"
                           "CREATE TABLE hero_power (hero_id INTEGER REFERENCES superhero(id),"
                           " power_id INTEGER REFERENCES superpower(id));" +
                           heroes_full + powers);
    run_sql(curated_, lookup + "CREATE TABLE superhero (id INTEGER PRIMARY KEY, superhero_name TEXT, height_cm INTEGER);" +
                          heroes_curated);
    ledger_ = std::make_shared<TokenLedger>();
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  static HybridSchema hero_schema() {
    HybridSchema schema;
    VirtualTable heroes;
    heroes.table = "superhero";
    heroes.key_columns = {"superhero_name"};
    VirtualColumn eyes{"eye_colour_id", FillType::Integer, "the colour of the hero's eyes", {},
                       Reference{"colour", "id", "colour"}};
    VirtualColumn nationality{"nationality", FillType::Text, "the hero's nationality", {}, std::nullopt};
    heroes.columns = {eyes, nationality};
    schema.tables.push_back(heroes);
    VirtualRelation powers;
    powers.name = "hero_power";
    powers.meaning = "the super powers of the hero";
    powers.owner_table = "superhero";
    powers.owner_id_column = "id";
    powers.owner_column = "hero_id";
    powers.key_columns = {"superhero_name"};
    powers.target_table = "superpower";
    powers.target_id_column = "id";
    powers.target_label_column = "power_name";
    powers.target_column = "power_id";
    schema.relations.push_back(powers);
    return schema;
  }

  std::shared_ptr<OracleFiller> oracle(double error_rate = 0.0) const {
    OracleSource source{"heroes", original_, {}, {}};
    source.dropped = {{"superhero.eye_colour_id", "the colour of the hero's eyes"},
                      {"superhero.nationality", "the hero's nationality"},
                      {"hero_power", "the super powers of the hero"}};
    source.keys = {{"superhero", {"superhero_name"}}};
    return std::make_shared<OracleFiller>(std::vector<OracleSource>{source}, OracleOptions{error_rate, 13});
  }

  std::shared_ptr<Filler> filler(std::shared_ptr<LLM> llm, int batch_size = 40) {
    return std::make_shared<Filler>(std::make_shared<MeteredLLM>(std::move(llm), ledger_),
                                    std::make_shared<FillStore>(store_path_), FillerOptions{batch_size, 400, 0});
  }

  std::unique_ptr<HybridSession> session(std::shared_ptr<Filler> f, FillMode mode = FillMode::Lazy,
                                         HybridSchema schema = hero_schema()) {
    HybridOptions options;
    options.mode = mode;
    return std::make_unique<HybridSession>("heroes", curated_, std::move(schema), std::move(f), options);
  }

  std::filesystem::path folder_;
  std::string original_, curated_, store_path_;
  std::shared_ptr<TokenLedger> ledger_;
};

inline std::string cell(const QueryResult& result, size_t row = 0, size_t column = 0) {
  if (!result.ok()) return "error: " + result.error->message;
  if (row >= result.rows.size()) return "<no row>";
  return value_to_string(result.rows[row][column]);
}

}  // namespace relmem::hybrid
