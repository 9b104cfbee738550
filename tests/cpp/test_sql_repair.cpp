// Repair of columns qualified by the wrong FROM item: what is repaired, what is left alone, and that nothing else
// of the text changes.
#include <gtest/gtest.h>

#include "relmem/sql/repair.hpp"
#include "relmem/sql/syntax_error.hpp"

using namespace relmem::sql;

namespace {

// Spider's pets_1.
relmem::Schema pets_schema() {
  using relmem::Column;
  using relmem::Table;
  relmem::Schema schema;
  schema.name = "pets_1";
  schema.tables.push_back(Table{"Student",
                                {Column{"StuID", "INTEGER", true, false}, Column{"LName", "VARCHAR(12)", false, false},
                                 Column{"Fname", "VARCHAR(12)", false, false}, Column{"Age", "INTEGER", false, false}},
                                {},
                                0});
  schema.tables.push_back(Table{"Has_Pet",
                                {Column{"StuID", "INTEGER", false, false}, Column{"PetID", "INTEGER", false, false}},
                                {},
                                0});
  schema.tables.push_back(Table{"Pets",
                                {Column{"PetID", "INTEGER", true, false}, Column{"PetType", "VARCHAR(20)", false, false},
                                 Column{"pet_age", "INTEGER", false, false}, Column{"weight", "REAL", false, false}},
                                {},
                                0});
  return schema;
}

const relmem::Schema kSchema = pets_schema();

std::string repaired(const std::string& sql) { return repair_qualifiers(sql, kSchema).sql; }

void expect_unchanged(const std::string& sql) {
  QualifierRepair result = repair_qualifiers(sql, kSchema);
  EXPECT_EQ(result.sql, sql);
  EXPECT_TRUE(result.repairs.empty()) << sql;
}

}  // namespace

TEST(SqlRepair, MovesAColumnToTheFromItemThatHasIt) {
  std::string sql =
      "SELECT T2.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID WHERE T2.pet_age > 1";
  QualifierRepair result = repair_qualifiers(sql, kSchema);
  EXPECT_EQ(result.sql,
            "SELECT T1.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID WHERE T1.pet_age > 1");
  ASSERT_EQ(result.repairs.size(), 2u);
  const QualifierFix& first = result.repairs[0];
  EXPECT_EQ(first.column, "weight");
  EXPECT_EQ(first.original, "T2");
  EXPECT_EQ(first.replacement, "T1");
  EXPECT_EQ(first.start, 7u);
  EXPECT_EQ(first.end, 9u);
  EXPECT_EQ(result.repairs[1].column, "pet_age");
  EXPECT_EQ(sql.substr(result.repairs[1].start, 2), "T2");
}

TEST(SqlRepair, UsesTheTableNameOfAnUnaliasedItemAndComparesCaseInsensitively) {
  EXPECT_EQ(repaired("SELECT has_pet.WEIGHT FROM Pets JOIN Has_Pet ON Pets.PetID = Has_Pet.PetID"),
            "SELECT Pets.WEIGHT FROM Pets JOIN Has_Pet ON Pets.PetID = Has_Pet.PetID");
  EXPECT_EQ(repaired("SELECT main.T2.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID"),
            "SELECT main.T1.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID");
}

TEST(SqlRepair, RepairsInsideASubqueryWithItsOwnFromItems) {
  EXPECT_EQ(repaired("SELECT Fname FROM Student WHERE StuID IN (SELECT T1.StuID FROM Has_Pet AS T1 JOIN Pets AS T2 "
                     "ON T1.PetID = T2.PetID WHERE T1.PetType = 'cat')"),
            "SELECT Fname FROM Student WHERE StuID IN (SELECT T1.StuID FROM Has_Pet AS T1 JOIN Pets AS T2 "
            "ON T1.PetID = T2.PetID WHERE T2.PetType = 'cat')");
  EXPECT_EQ(repaired("SELECT T2.weight FROM (SELECT PetID, weight FROM Pets) AS T1 JOIN Has_Pet AS T2 "
                     "ON T1.PetID = T2.PetID"),
            "SELECT T1.weight FROM (SELECT PetID, weight FROM Pets) AS T1 JOIN Has_Pet AS T2 "
            "ON T1.PetID = T2.PetID");
}

TEST(SqlRepair, LeavesAmbiguousAndOwnerlessColumnsAlone) {
  // Has_Pet and Pets both have PetID.
  expect_unchanged("SELECT T1.PetID FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID "
                   "JOIN Pets AS T3 ON T2.PetID = T3.PetID");
  expect_unchanged("SELECT T1.color FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID");
  // Vets is not in the schema: it may have the column too.
  expect_unchanged("SELECT T2.weight FROM Pets AS T1 JOIN Vets AS T3 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID");
  // Two FROM items named T1: the name would not single out the one that has the column.
  expect_unchanged("SELECT T2.weight FROM Pets AS T1 JOIN Has_Pet AS T2 JOIN Student AS T1");
}

TEST(SqlRepair, LeavesAJoinThatWouldCompareAColumnWithItself) {
  // Student has no PetID: "T2.PetID = T2.PetID" would join every student with every pet.
  expect_unchanged("SELECT T1.Fname FROM Student AS T1 JOIN Pets AS T2 ON T1.PetID = T2.PetID");
  expect_unchanged("SELECT T1.Fname FROM Student AS T1 JOIN Pets AS T2 ON T2.PetID IS T1.PetID");
  // The column elsewhere is still repaired.
  EXPECT_EQ(repaired("SELECT T1.weight FROM Student AS T1 JOIN Pets AS T2 ON T1.PetID = T2.PetID"),
            "SELECT T2.weight FROM Student AS T1 JOIN Pets AS T2 ON T1.PetID = T2.PetID");
}

TEST(SqlRepair, StaysInsideTheQualifiersOwnSelect) {
  // S names the enclosing query's Student, which lacks PetID: neither the subquery's H nor the enclosing query's
  // H2 is looked at.
  expect_unchanged("SELECT Fname FROM Student AS S JOIN Has_Pet AS H2 ON S.StuID = H2.StuID WHERE EXISTS "
                   "(SELECT 1 FROM Has_Pet AS H WHERE H.StuID = S.StuID AND S.PetID = 1)");
  // Only the enclosing query's Student has Age: not a candidate for H.
  expect_unchanged("SELECT Fname FROM Student AS S WHERE EXISTS (SELECT 1 FROM Has_Pet AS H "
                   "JOIN Pets AS P ON H.PetID = P.PetID WHERE H.Age > 20)");
}

TEST(SqlRepair, LeavesCorrectSqlUnchangedByteForByte) {
  const char* queries[] = {
      "SELECT T1.weight FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID",
      "select  avg(weight) ,  max(weight) , pettype from pets group by pettype ;",
      "SELECT Fname -- first name\nFROM Student /* all of them */ WHERE Age > 20",
      "SELECT count(*) FROM Student AS S WHERE NOT EXISTS (SELECT * FROM Has_Pet AS H WHERE H.StuID = S.StuID)",
      "WITH heavy AS (SELECT PetID FROM Pets WHERE weight > 10) SELECT H.StuID FROM Has_Pet AS H "
      "JOIN heavy ON heavy.PetID = H.PetID",
      "SELECT T1.rowid FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.PetID = T2.PetID",
  };
  for (const char* sql : queries) expect_unchanged(sql);
}

TEST(SqlRepair, QuotesTheReplacementAsTheQualifierWasQuoted) {
  EXPECT_EQ(repaired("SELECT \"T2\".\"weight\" FROM Pets AS \"T1\" JOIN Has_Pet AS \"T2\" ON \"T1\".PetID = "
                     "\"T2\".PetID"),
            "SELECT \"T1\".\"weight\" FROM Pets AS \"T1\" JOIN Has_Pet AS \"T2\" ON \"T1\".PetID = \"T2\".PetID");
  EXPECT_EQ(repaired("SELECT [T2].weight, `T2`.pet_age FROM Pets AS T1 JOIN Has_Pet AS T2"),
            "SELECT [T1].weight, `T1`.pet_age FROM Pets AS T1 JOIN Has_Pet AS T2");
  // A bare qualifier replaced by a name that cannot be written bare.
  EXPECT_EQ(repaired("SELECT hp.weight FROM Pets AS \"my pets\" JOIN Has_Pet AS hp"),
            "SELECT \"my pets\".weight FROM Pets AS \"my pets\" JOIN Has_Pet AS hp");
}

TEST(SqlRepair, KeepsCommentsAndWhitespace) {
  EXPECT_EQ(repaired("SELECT /* w */ T2 . weight -- heaviest\nFROM Pets AS T1\n\tJOIN Has_Pet AS T2 ON "
                     "T1.PetID = T2.PetID ORDER BY T2.weight DESC LIMIT 1;"),
            "SELECT /* w */ T1 . weight -- heaviest\nFROM Pets AS T1\n\tJOIN Has_Pet AS T2 ON "
            "T1.PetID = T2.PetID ORDER BY T1.weight DESC LIMIT 1;");
}

TEST(SqlRepair, RefusesSqlThatDoesNotParse) {
  EXPECT_THROW(repair_qualifiers("SELECT T2.weight FROM", kSchema), SyntaxError);
}
