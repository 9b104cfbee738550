// A literal compared with a foreign key that stores codes, rewritten into a lookup of the keys (key_lookup.hpp),
// alone and inside correct_values.
#include <gtest/gtest.h>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/values/value_correction.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::TempDir;

namespace {

// Aberdeen has two airports; 'Ashley' is a city and an airport's name of the same airport; 'Springfield' is a city
// and another airport's name.
const char* kFlights = R"sql(
  CREATE TABLE airports (City TEXT, AirportCode TEXT PRIMARY KEY, AirportName TEXT);
  CREATE TABLE airlines (uid INTEGER PRIMARY KEY, Airline TEXT);
  CREATE TABLE flights (Airline INTEGER, FlightNo INTEGER, SourceAirport TEXT, DestAirport TEXT, Note TEXT,
                        FOREIGN KEY (SourceAirport) REFERENCES airports(AirportCode),
                        FOREIGN KEY (DestAirport) REFERENCES airports(AirportCode),
                        FOREIGN KEY (Airline) REFERENCES airlines);
  INSERT INTO airports VALUES ('Aberdeen', 'APG', 'Phillips AAF'), ('Aberdeen', 'ABR', 'Municipal'),
                              ('Ashley', 'ASY', 'Ashley'), ('Springfield', 'SGF', 'Branson'),
                              ('Branson', 'BKG', 'Springfield');
  INSERT INTO airlines VALUES (1, 'United Airlines'), (2, 'Delta Airlines');
  INSERT INTO flights VALUES (1, 10, 'APG', 'ASY', 'Aberdeen'), (1, 11, 'ABR', 'ASY', ''), (2, 12, 'ASY', 'APG', ''),
                             (2, 13, 'SGF', 'BKG', '');
)sql";

class KeyLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("flights.sqlite"), kFlights);
    catalog = Catalog::open(dir.path());
    memory = std::make_unique<ValueMemory>(ValueMemory::build(catalog, std::make_shared<HashingEncoder>(256)));
  }
  std::vector<std::vector<std::string>> rows(const std::string& sql) const {
    const QueryResult result = catalog.execute("flights", sql, {});
    EXPECT_TRUE(result.ok()) << sql;
    std::vector<std::vector<std::string>> out;
    for (const auto& row : result.rows) {
      out.emplace_back();
      for (const auto& value : row) out.back().push_back(value_to_string(value));
    }
    return out;
  }
  TempDir dir;
  Catalog catalog;
  std::unique_ptr<ValueMemory> memory;
};

}  // namespace

TEST_F(KeyLookupTest, TheComparisonBecomesALookupOfEveryKeyTheLiteralNames) {
  const std::string sql = "SELECT count(*) FROM flights WHERE SourceAirport = 'Aberdeen'";
  const CorrectionResult result = correct_values(sql, "flights", catalog, *memory);
  EXPECT_EQ(result.sql,
            "SELECT count(*) FROM flights WHERE SourceAirport IN (SELECT \"AirportCode\" FROM \"airports\" WHERE "
            "\"City\" = 'Aberdeen')");
  ASSERT_EQ(result.lookups.size(), 1u);
  EXPECT_EQ(result.lookups[0].table, "airports");
  EXPECT_EQ(result.lookups[0].key, "AirportCode");
  EXPECT_EQ(result.lookups[0].column, "City");
  EXPECT_TRUE(result.replacements.empty());  // not a fuzzy match to one code
  EXPECT_EQ(rows(result.sql), rows("SELECT count(*) FROM flights AS T1 JOIN airports AS T2 ON T1.SourceAirport = "
                                   "T2.AirportCode WHERE T2.City = 'Aberdeen'"));
  EXPECT_EQ(rows(result.sql)[0][0], "2");
}

TEST_F(KeyLookupTest, QualifiedQuotedNegatedAndImplicitKeysAndOtherLiteralsStillCorrected) {
  const std::string sql =
      "SELECT T1.FlightNo FROM flights AS T1 WHERE T1.\"DestAirport\" <> \"Ashley\" AND T1.Airline == 'United "
      "Airlines' AND T1.SourceAirport = 'apg'";
  const CorrectionResult result = correct_values(sql, "flights", catalog, *memory);
  EXPECT_EQ(result.sql,
            "SELECT T1.FlightNo FROM flights AS T1 WHERE T1.\"DestAirport\" NOT IN (SELECT \"AirportCode\" FROM "
            "\"airports\" WHERE \"City\" = 'Ashley') AND T1.Airline IN (SELECT \"uid\" FROM \"airlines\" WHERE "
            "\"Airline\" = 'United Airlines') AND T1.SourceAirport = 'APG'");
  ASSERT_EQ(result.lookups.size(), 2u);
  EXPECT_EQ(result.lookups[1].key, "uid");  // the primary key the reference names implicitly
  ASSERT_EQ(result.replacements.size(), 1u);
  EXPECT_EQ(result.replacements[0].reason, "case");
  EXPECT_EQ(rows(result.sql).size(), 0u);  // United's flights leave from APG and ABR, both to Ashley
}

TEST_F(KeyLookupTest, TheColumnIsReadAsTheQueryWritesIt) {
  // The literal on the left, a collation, and the column read through a subquery's alias.
  const std::string sql =
      "SELECT f.n FROM (SELECT FlightNo AS n, SourceAirport AS s FROM flights) AS f WHERE 'Aberdeen' = f.s AND "
      "(f.s COLLATE NOCASE != 'Ashley')";
  const CorrectionResult result = correct_values(sql, "flights", catalog, *memory);
  EXPECT_EQ(result.sql,
            "SELECT f.n FROM (SELECT FlightNo AS n, SourceAirport AS s FROM flights) AS f WHERE f.s IN (SELECT "
            "\"AirportCode\" FROM \"airports\" WHERE \"City\" = 'Aberdeen') AND (f.s COLLATE NOCASE NOT IN (SELECT "
            "\"AirportCode\" FROM \"airports\" WHERE \"City\" = 'Ashley'))");
  ASSERT_EQ(result.lookups.size(), 2u);
  EXPECT_EQ(rows(result.sql), (std::vector<std::vector<std::string>>{{"10"}, {"11"}}));
}

TEST_F(KeyLookupTest, LeavesWhatIsNotALookup) {
  // Stored as written; not a foreign key; a pattern; an IN list; several columns naming other rows.
  for (const std::string sql : {"SELECT * FROM flights WHERE SourceAirport = 'APG'",
                                "SELECT * FROM flights WHERE Note = 'Ashley'",
                                "SELECT * FROM flights WHERE SourceAirport LIKE 'Aberdeen'",
                                "SELECT * FROM flights WHERE SourceAirport IN ('Aberdeen')",
                                "SELECT * FROM flights WHERE DestAirport = 'Springfield'"}) {
    const CorrectionResult result = correct_values(sql, "flights", catalog, *memory);
    EXPECT_TRUE(result.lookups.empty()) << sql;
    EXPECT_EQ(result.sql.find("SELECT \"AirportCode\""), std::string::npos) << sql;
  }
  const auto conditions = value_conditions("SELECT * FROM flights WHERE DestAirport = 'Ashley'",
                                           catalog.schema("flights"));
  ASSERT_EQ(conditions.size(), 1u);
  const auto ashley = find_key_lookup(conditions[0], "flights", catalog);
  ASSERT_TRUE(ashley.has_value());  // City and AirportName both name ASY: the first column in table order
  EXPECT_EQ(ashley->column, "City");
}
