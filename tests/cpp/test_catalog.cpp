#include <gtest/gtest.h>

#include "relmem/catalog/catalog.hpp"
#include "relmem/common.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::TempDir;

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("concert/concert.sqlite"), relmem_test::kConcertScript);
    relmem_test::make_database(dir.file("other/pets.db"), "CREATE TABLE pet (pet_id INTEGER PRIMARY KEY, kind TEXT);"
                                                          "INSERT INTO pet VALUES (1, 'dog'), (2, 'cat'), (3, 'dog');");
  }
  TempDir dir;
};

TEST_F(CatalogTest, FindsDatabasesRecursively) {
  Catalog catalog = Catalog::open(dir.path());
  EXPECT_EQ(catalog.databases(), (std::vector<std::string>{"concert", "pets"}));
  EXPECT_TRUE(catalog.skipped().empty());
}

TEST_F(CatalogTest, ReadsTablesColumnsKeysAndCounts) {
  Catalog catalog = Catalog::open(dir.path());
  const Schema& schema = catalog.schema("concert");
  ASSERT_EQ(schema.tables.size(), 2u);
  const Table* stadium = schema.table("STADIUM");
  ASSERT_NE(stadium, nullptr);
  EXPECT_EQ(stadium->row_count, 3);
  ASSERT_EQ(stadium->columns.size(), 4u);
  EXPECT_TRUE(stadium->column("stadium_id")->primary_key);
  EXPECT_TRUE(stadium->column("name")->not_null);
  EXPECT_EQ(stadium->column("city")->type, "VARCHAR(40)");
  const Table* concert = schema.table("concert");
  ASSERT_EQ(concert->foreign_keys.size(), 1u);
  EXPECT_EQ(concert->foreign_keys[0].from_column, "stadium_id");
  EXPECT_EQ(concert->foreign_keys[0].to_table, "stadium");
  EXPECT_EQ(concert->foreign_keys[0].to_column, "stadium_id");
}

TEST_F(CatalogTest, DdlRecreatesTheSchema) {
  Catalog catalog = Catalog::open(dir.path());
  const std::string ddl = catalog.ddl("concert");
  EXPECT_NE(ddl.find("CREATE TABLE \"stadium\""), std::string::npos);
  EXPECT_NE(ddl.find("FOREIGN KEY (\"stadium_id\") REFERENCES \"stadium\" (\"stadium_id\")"), std::string::npos);
  relmem_test::make_database(dir.file("copy.sqlite"), ddl);  // the DDL is valid SQL
  EXPECT_EQ(read_schema(dir.file("copy.sqlite")).tables.size(), 2u);
}

TEST_F(CatalogTest, CardShowsHumanNamesSamplesAndLinks) {
  Catalog catalog = Catalog::open(dir.path());
  CardOptions options;
  options.description = "Concerts and where they happen.";
  const std::string card = catalog.card("concert", options);
  EXPECT_NE(card.find("database concert"), std::string::npos);
  EXPECT_NE(card.find("Concerts and where they happen."), std::string::npos);
  EXPECT_NE(card.find("concert name text [e.g. "), std::string::npos);
  EXPECT_NE(card.find("city varchar(40) [e.g. LA, SF]"), std::string::npos);  // most frequent first
  EXPECT_NE(card.find("foreign keys: concert.stadium id -> stadium.stadium id"), std::string::npos);
  EXPECT_EQ(card.find("capacity int [e.g."), std::string::npos);  // numbers are not sampled
}

TEST_F(CatalogTest, DistinctValuesAreCappedAndMostFrequentFirst) {
  Catalog catalog = Catalog::open(dir.path());
  auto values = catalog.distinct_values("pets", "pet", "kind", 10);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(std::get<std::string>(values[0]), "dog");
  EXPECT_EQ(catalog.distinct_values("pets", "pet", "kind", 1).size(), 1u);
  EXPECT_THROW(catalog.distinct_values("pets", "pet", "nope", 1), Error);
  EXPECT_THROW(catalog.distinct_values("pets", "nope", "kind", 1), Error);
}

TEST_F(CatalogTest, AddAndRemove) {
  Catalog catalog = Catalog::open(dir.path() + "/concert");
  EXPECT_EQ(catalog.databases().size(), 1u);
  catalog.add(dir.file("other/pets.db"));
  EXPECT_TRUE(catalog.contains("pets"));
  EXPECT_THROW(catalog.add(dir.file("other/pets.db")), Error);  // duplicate name
  EXPECT_TRUE(catalog.remove("pets"));
  EXPECT_FALSE(catalog.remove("pets"));
  EXPECT_THROW(catalog.schema("pets"), Error);
}

TEST_F(CatalogTest, BadInputGivesClearErrors) {
  EXPECT_THROW(Catalog::open(dir.file("missing")), Error);
  relmem_test::write_bytes(dir.file("junk/notes.sqlite"), "");
  std::filesystem::create_directories(dir.file("junk"));
  relmem_test::write_bytes(dir.file("junk/notes.sqlite"), "this is not a database at all, just some text......");
  try {
    Catalog::open(dir.file("junk/notes.sqlite"));
    FAIL() << "a text file must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a readable SQLite database"), std::string::npos) << e.what();
  }
  // A folder scan skips the bad file, says why, and keeps the good ones.
  Catalog catalog = Catalog::open(dir.path());
  EXPECT_EQ(catalog.databases().size(), 2u);
  ASSERT_EQ(catalog.skipped().size(), 1u);
  EXPECT_NE(catalog.skipped()[0].path.find("notes.sqlite"), std::string::npos);
}

TEST_F(CatalogTest, CorruptDatabaseIsRefused) {
  std::string bytes = relmem_test::read_bytes(dir.file("concert/concert.sqlite"));
  for (size_t i = 100; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(0xA5);
  relmem_test::write_bytes(dir.file("corrupt.sqlite"), bytes);
  EXPECT_THROW(Catalog::open(dir.file("corrupt.sqlite")), Error);
}

TEST_F(CatalogTest, LockedDatabaseStillReads) {
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(dir.file("other/pets.db").c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN EXCLUSIVE; INSERT INTO pet VALUES (9, 'owl');", nullptr, nullptr, nullptr),
            SQLITE_OK);
  // An exclusive lock blocks readers: the catalog reports it instead of hanging or crashing.
  EXPECT_THROW(Catalog::open(dir.file("other/pets.db")), Error);
  sqlite3_exec(writer, "ROLLBACK;", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  EXPECT_EQ(Catalog::open(dir.file("other/pets.db")).schema("pets").tables[0].row_count, 3);
}

TEST(SchemaTypes, AffinityRules) {
  EXPECT_TRUE(is_text_type("TEXT"));
  EXPECT_TRUE(is_text_type("varchar(20)"));
  EXPECT_TRUE(is_text_type(""));
  EXPECT_FALSE(is_text_type("INTEGER"));
  EXPECT_TRUE(is_numeric_type("REAL"));
  EXPECT_TRUE(is_numeric_type("number"));
  EXPECT_FALSE(is_numeric_type("BLOB"));
  EXPECT_FALSE(is_numeric_type("text"));
}

TEST(Identifiers, ReadAsWords) {
  EXPECT_EQ(humanize_identifier("StadiumCapacity_2019"), "stadium capacity 2019");
  EXPECT_EQ(humanize_identifier("singer_in_concert"), "singer in concert");
  EXPECT_EQ(humanize_identifier("GPA"), "gpa");
  EXPECT_EQ(humanize_identifier("_x__y_"), "x y");
  EXPECT_EQ(humanize_identifier(""), "");
}
