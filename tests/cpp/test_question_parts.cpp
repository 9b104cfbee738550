// Splitting composite questions into the parts the selection memory scores, and ranking composite questions by
// their parts.
#include <gtest/gtest.h>

#include <algorithm>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/relevance/labeled_questions.hpp"
#include "relmem/memories/selection/selection_memory.hpp"
#include "relmem/memories/text/question_parts.hpp"
#include "test_util.hpp"

using namespace relmem;

using Parts = std::vector<std::string>;

TEST(QuestionParts, AnOrdinaryQuestionIsItself) {
  EXPECT_EQ(question_parts("How many singers are there?"), Parts{"How many singers are there?"});
  EXPECT_EQ(question_parts(""), Parts{""});
  // A short second sentence is not a part of its own.
  EXPECT_EQ(question_parts("List the names. Sort them."), Parts{"List the names. Sort them."});
}

TEST(QuestionParts, ThePapersTemplateSplitsAtItsMarkers) {
  const Parts parts{"How many singers are there?", "What is the average age of pets?"};
  EXPECT_EQ(question_parts(compose_question(parts, CompositeStyle::LargerNumber)), parts);
  EXPECT_EQ(question_parts("Q1: a b c; Q2: d e f; Q3: g h i"), (Parts{"a b c", "d e f", "g h i"}));
  // One marker, or a marker inside a word, is no template.
  EXPECT_EQ(question_parts("Answer Q1: how many singers"), Parts{"Answer Q1: how many singers"});
  EXPECT_EQ(question_parts("Sales in FQ1: and FQ2: totals"), Parts{"Sales in FQ1: and FQ2: totals"});
}

TEST(QuestionParts, SentencesAndClausesSplit) {
  EXPECT_EQ(question_parts("Show the names of teachers. Who is the earliest graduate of the school? Show all codes."),
            (Parts{"Show the names of teachers.", "Who is the earliest graduate of the school?", "Show all codes."}));
  EXPECT_EQ(question_parts("how many singers are there? what is the oldest car"),
            (Parts{"how many singers are there?", "what is the oldest car"}));
  EXPECT_EQ(question_parts("How many singers are there, and also what is the average age of dogs?"),
            (Parts{"How many singers are there", "what is the average age of dogs?"}));
  EXPECT_EQ(question_parts("How many singers are there? Also, list the dogs."),
            (Parts{"How many singers are there?", "list the dogs."}));
  EXPECT_EQ(question_parts("Line one has words\nline two has words"), (Parts{"Line one has words", "line two has words"}));
  // A sentence that lost its full stop, or starts in lower case with a question word.
  EXPECT_EQ(question_parts("List the dates of debates with over 150 people What is the oldest car?"),
            (Parts{"List the dates of debates with over 150 people", "What is the oldest car?"}));
  EXPECT_EQ(question_parts("Which battles lost the ship named 'HMS Atalanta' How many people live in Asia?"),
            (Parts{"Which battles lost the ship named 'HMS Atalanta'", "How many people live in Asia?"}));
  EXPECT_EQ(question_parts("Which films is \"Show Boat\" like?"), Parts{"Which films is \"Show Boat\" like?"});
  EXPECT_EQ(question_parts("List the screen modes. how many female dependents are there?"),
            (Parts{"List the screen modes.", "how many female dependents are there?"}));
  EXPECT_EQ(question_parts("What is the name of the Show with the most viewers?"),
            Parts{"What is the name of the Show with the most viewers?"});
  EXPECT_EQ(question_parts("Which singer sang at the concert in Boston. the oldest one"),
            Parts{"Which singer sang at the concert in Boston. the oldest one"});
  // A short request that refers back to the sentence before it stays with that sentence.
  EXPECT_EQ(question_parts("Which customers hold a policy of type 'Deputy'? Return the customer details."),
            Parts{"Which customers hold a policy of type 'Deputy'? Return the customer details."});
  EXPECT_EQ(question_parts("Which students play both Canoeing and Kayaking? Tell me their student ids. How many "
                           "claims are there?"),
            (Parts{"Which students play both Canoeing and Kayaking? Tell me their student ids.",
                   "How many claims are there?"}));
  // A shared topic word counts in singular and plural ("parties", "party").
  EXPECT_EQ(question_parts("Which parties have hosts of age above 50? Give me the party locations."),
            Parts{"Which parties have hosts of age above 50? Give me the party locations."});
  EXPECT_EQ(question_parts("How many singers are there? List the names of all dogs."),
            (Parts{"How many singers are there?", "List the names of all dogs."}));
  // Abbreviations, initials and decimals end no sentence.
  EXPECT_EQ(question_parts("Find Dr. Smith and J. Doe in St. Louis."), Parts{"Find Dr. Smith and J. Doe in St. Louis."});
  EXPECT_EQ(question_parts("Which cars weigh over 3.5 tons?"), Parts{"Which cars weigh over 3.5 tons?"});
}

TEST(QuestionParts, NumberedAndListedParts) {
  EXPECT_EQ(question_parts("1. How many singers? 2. How many cars?"), (Parts{"How many singers?", "How many cars?"}));
  EXPECT_EQ(question_parts("Tell me: (a) the oldest singer (b) the fastest car"),
            (Parts{"the oldest singer", "the fastest car"}));
  EXPECT_EQ(question_parts("- oldest singer\n- fastest car\n- tallest building"),
            (Parts{"oldest singer", "fastest car", "tallest building"}));
  // Numbers that do not count up from one are no list.
  EXPECT_EQ(question_parts("Show cars with 2) wheels and 3) doors"), Parts{"Show cars with 2) wheels and 3) doors"});
}

namespace {

const char* kHospitalScript = R"sql(
  CREATE TABLE hospital (id INTEGER PRIMARY KEY, name TEXT, city TEXT, beds INTEGER);
  CREATE TABLE doctor (id INTEGER PRIMARY KEY, name TEXT, specialty TEXT, hospital_id INTEGER);
  INSERT INTO hospital VALUES (1, 'Mercy General', 'Boston', 300);
)sql";
const char* kFlightsScript = R"sql(
  CREATE TABLE airport (code TEXT PRIMARY KEY, airport_name TEXT, city TEXT);
  CREATE TABLE flight (flight_id INTEGER PRIMARY KEY, origin TEXT, destination TEXT, airline TEXT);
  INSERT INTO airport VALUES ('BOS', 'Logan International', 'Boston');
)sql";
const char* kPetsScript = R"sql(
  CREATE TABLE pet (id INTEGER PRIMARY KEY, pet_type TEXT, pet_age INTEGER, weight REAL);
  INSERT INTO pet VALUES (1, 'dog', 3, 12.5);
)sql";

std::vector<std::string> names(const std::vector<DatabaseMatch>& matches) {
  std::vector<std::string> out;
  for (const auto& m : matches) out.push_back(m.database);
  return out;
}

// A memory of concert_singer, hospital, flights and pets, on the hashing encoder, with the databases in `dir`.
SelectionMemory four_database_memory(const relmem_test::TempDir& dir) {
  relmem_test::make_database(dir.file("dbs/concert_singer.sqlite"), relmem_test::kConcertScript);
  relmem_test::make_database(dir.file("dbs/hospital.sqlite"), kHospitalScript);
  relmem_test::make_database(dir.file("dbs/flights.sqlite"), kFlightsScript);
  relmem_test::make_database(dir.file("dbs/pets.sqlite"), kPetsScript);
  return SelectionMemory::build(Catalog::open(dir.file("dbs")), std::make_shared<HashingEncoder>(256));
}

}  // namespace

TEST(QuestionParts, SelectionRanksEveryDatabaseOfACompositeQuestionFirst) {
  relmem_test::TempDir dir;
  auto memory = four_database_memory(dir);

  const std::string doctors = "Which doctor works at the hospital with the most beds?";
  const std::string flights = "How many flights leave the airport of each airline?";
  EXPECT_EQ(memory.select(doctors, 1)[0].database, "hospital");
  EXPECT_EQ(memory.select(flights, 1)[0].database, "flights");

  const std::string composite = compose_question({doctors, flights}, CompositeStyle::LargerNumber);
  const auto matches = memory.select(composite, 4);
  ASSERT_EQ(matches.size(), 4u);
  auto top2 = names(matches);
  top2.resize(2);
  std::sort(top2.begin(), top2.end());
  EXPECT_EQ(top2, (std::vector<std::string>{"flights", "hospital"}));
  // Both parts' best databases rank alike; each keeps the probability its own part gives it.
  EXPECT_FLOAT_EQ(matches[0].score, matches[1].score);
  const std::string& first_part = matches[0].database == "hospital" ? doctors : flights;
  EXPECT_FLOAT_EQ(matches[0].probability, memory.select(first_part, 1)[0].probability);
  for (size_t i = 1; i < matches.size(); ++i) EXPECT_GE(matches[i - 1].score, matches[i].score);

  // Set selection takes at least every part's best database, before and after calibration.
  const std::vector<std::string> both{"flights", "hospital"};
  auto chosen = names(memory.select_set(composite));
  std::sort(chosen.begin(), chosen.end());
  EXPECT_EQ(chosen, both);
  memory.calibrate({{doctors, {"hospital"}}, {flights, {"flights"}}, {composite, {"hospital", "flights"}}});
  chosen = names(memory.select_set(composite));
  std::sort(chosen.begin(), chosen.end());
  EXPECT_EQ(chosen, both);
  EXPECT_EQ(names(memory.select_set(doctors)), std::vector<std::string>{"hospital"});
  EXPECT_EQ(names(memory.select_batch({doctors, composite}, 2)[1]), names(memory.select(composite, 2)));

  // The same two questions written one after the other, without a template.
  const std::string plain = doctors + " " + flights;
  top2 = names(memory.select(plain, 2));
  std::sort(top2.begin(), top2.end());
  EXPECT_EQ(top2, (std::vector<std::string>{"flights", "hospital"}));
  chosen = names(memory.select_set(plain));
  std::sort(chosen.begin(), chosen.end());
  EXPECT_EQ(chosen, both);
}

TEST(QuestionParts, ThreeSentencesRankByTheirPartsAlone) {
  relmem_test::TempDir dir;
  auto memory = four_database_memory(dir);
  const std::string question = "Which doctor works at the hospital with the most beds? How many flights leave the "
                               "airport of each airline? What is the weight of the oldest pet?";
  const Parts parts = question_parts(question);
  ASSERT_EQ(parts.size(), 3u);
  // Beside three parts, the whole question's ranking adds nothing: the ranking is that of the parts alone.
  const auto whole = memory.select(question, 4);
  const auto by_parts = memory.select_parts(parts, 4);
  ASSERT_EQ(names(whole), names(by_parts));
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_FLOAT_EQ(whole[i].score, by_parts[i].score);
  auto top3 = names(whole);
  top3.resize(3);
  std::sort(top3.begin(), top3.end());
  EXPECT_EQ(top3, (std::vector<std::string>{"flights", "hospital", "pets"}));
}

TEST(QuestionParts, AQuestionCutInTwoKeepsItsWholeRankingFirst) {
  relmem_test::TempDir dir;
  relmem_test::make_database(dir.file("dbs/hospital.sqlite"), kHospitalScript);
  relmem_test::make_database(dir.file("dbs/flights.sqlite"), kFlightsScript);
  relmem_test::make_database(dir.file("dbs/pets.sqlite"), kPetsScript);
  const Catalog catalog = Catalog::open(dir.file("dbs"));
  auto memory = SelectionMemory::build(catalog, std::make_shared<HashingEncoder>(256));
  // The follow-up sentence alone points elsewhere; the whole question's best database still comes first.
  const std::string question = "Which doctor in the hospital treats the most patients with beds? List the airline.";
  ASSERT_EQ(question_parts(question).size(), 2u);
  ASSERT_EQ(memory.select("List the airline.", 1)[0].database, "flights");
  const auto ranked = names(memory.select(question, 3));
  EXPECT_EQ(ranked[0], "hospital");
  EXPECT_EQ(ranked[1], "flights");  // the part's best comes next
}
