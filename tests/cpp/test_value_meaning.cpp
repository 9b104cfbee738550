// The value memory by meaning: meaning channels and when a column takes them, dates and numbers written
// differently, and learned aliases.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/memories/values/value_correction.hpp"
#include "relmem/memories/values/value_formats.hpp"
#include "relmem/memories/values/value_lexicon.hpp"
#include "relmem/memories/values/value_memory.hpp"
#include "test_util.hpp"

using namespace relmem;
using relmem_test::TempDir;

namespace {

const char* kPeople = R"sql(
  CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, sex TEXT, country TEXT, state TEXT, nationality TEXT,
                       team_code TEXT, born TEXT, salary INTEGER, job TEXT);
  INSERT INTO person VALUES
    (1, 'Ana Ruiz', 'F', 'France', 'AK', 'American', 'SUI', '2010-03-03', 5000, 'film editor'),
    (2, 'Bo Chen', 'M', 'Germany', 'CA', 'Canadian', 'GER', '2011-07-14', 1000, 'teacher'),
    (3, 'Cy Adams', 'F', 'United States', 'NY', 'French', 'USA', '2009-12-25', 2500, 'physician'),
    (4, 'Di Park', 'F', 'Japan', 'TX', 'German', 'NED', '2012-01-01', 7000, 'teacher');
  CREATE TABLE countrylanguage (code TEXT, language TEXT, IsOfficial TEXT);
  INSERT INTO countrylanguage VALUES ('FRA', 'French', 'T'), ('FRA', 'Arabic', 'F'), ('DEU', 'German', 'T'),
                                     ('DEU', 'Turkish', 'F'), ('USA', 'English', 'T');
)sql";

bool sources_present() { return ValueLexicon::shared().missing_sources().empty(); }

class ValueMeaningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relmem_test::make_database(dir.file("dbs/people.sqlite"), kPeople);
    catalog = Catalog::open(dir.file("dbs"));
    memory = std::make_unique<ValueMemory>(ValueMemory::build(catalog, std::make_shared<HashingEncoder>(256)));
  }
  std::string first(const std::string& table, const std::string& column, const std::string& written,
                    std::string* channel = nullptr) const {
    const auto found = memory->lookup("people", table, column, written, 3);
    if (found.empty()) return "";
    if (channel) *channel = found[0].channel;
    return found[0].value;
  }
  TempDir dir;
  Catalog catalog;
  std::unique_ptr<ValueMemory> memory;
};

}  // namespace

TEST(ValueLexicon, ReadsEveryForm) {
  if (!sources_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  const ValueLexicon& lexicon = ValueLexicon::shared();
  const auto channels_of = [&](const std::string& form) {
    std::vector<std::string> names;
    for (uint32_t id : lexicon.concepts_of(ValueLexicon::key_of(form)))
      names.push_back(channel_name(lexicon.concept_at(id).channel) + ":" + lexicon.concept_at(id).name);
    return names;
  };
  EXPECT_EQ(channels_of("Swiss"), std::vector<std::string>{"country:CHE"});
  EXPECT_EQ(channels_of("SUI"), std::vector<std::string>{"country:CHE"});
  EXPECT_EQ(channels_of("U.S.A."), std::vector<std::string>{"country:USA"});
  EXPECT_EQ(channels_of("Alaska"), std::vector<std::string>{"us_state:AK"});
  EXPECT_EQ(channels_of("women"), std::vector<std::string>{"gender:female"});
  const auto f = channels_of("F");  // female, false (and degrees Fahrenheit): the column decides
  EXPECT_NE(std::find(f.begin(), f.end(), "gender:female"), f.end());
  EXPECT_NE(std::find(f.begin(), f.end(), "boolean:false"), f.end());
  bool movie = false;
  for (const auto& synonym : lexicon.synonyms_of("film")) movie = movie || (synonym.key == "movie" && synonym.links == 0);
  EXPECT_TRUE(movie);
  const auto bases = lexicon.base_forms("verified");
  EXPECT_NE(std::find(bases.begin(), bases.end(), "verify"), bases.end());
  EXPECT_EQ(lexicon.base_forms("accounting"), std::vector<std::string>{"accounting"});  // a lemma of its own
  const auto finished = lexicon.base_forms("finished");  // an adjective lemma, and the verb's past participle
  EXPECT_NE(std::find(finished.begin(), finished.end(), "finish"), finished.end());
  const auto links_to = [&](const std::string& from, const std::string& to) {
    for (const auto& synonym : lexicon.synonyms_of(from))
      if (synonym.key == to) return synonym.links;
    return -1;
  };
  EXPECT_EQ(links_to("kitty", "cat"), 2);  // a kind of a kind of cat
  EXPECT_EQ(links_to("meal", "food"), 2);
  EXPECT_EQ(links_to("finished", "complete"), 0);
  EXPECT_TRUE(lexicon.knows("iceland"));
  EXPECT_TRUE(lexicon.knows("feet"));
  EXPECT_FALSE(lexicon.knows("frnace"));
}

TEST(ValueLexicon, MissingSourcesAreReportedNotFatal) {
  TempDir empty;
  const ValueLexicon lexicon = ValueLexicon::load({empty.file("no-iso"), empty.file("no-wordnet"), empty.file("no")});
  EXPECT_EQ(lexicon.missing_sources().size(), 3u);
  EXPECT_EQ(lexicon.concepts(), 0u);
  EXPECT_TRUE(lexicon.synonyms_of("film").empty());
}

TEST(ValueLexicon, CorruptDataFileIsAClearError) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("data"));
  for (const char* name : {"demonyms.tsv", "ioc_codes.tsv", "us_states.tsv", "months.tsv", "units.tsv"})
    std::ofstream(dir.file(std::string("data/") + name)) << "# empty\n";
  std::ofstream(dir.file("data/codes.tsv")) << "colour\tred\tR\n";
  EXPECT_THROW(ValueLexicon::load({dir.file("x"), dir.file("y"), dir.file("data")}), Error);
}

TEST_F(ValueMeaningTest, ConceptChannelsNameWhyTheyMatched) {
  if (!sources_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  std::string channel;
  EXPECT_EQ(first("person", "country", "French", &channel), "France");
  EXPECT_EQ(channel, "country");
  EXPECT_EQ(first("person", "team_code", "Swiss", &channel), "SUI");  // IOC code
  EXPECT_EQ(first("person", "team_code", "Dutch"), "NED");
  EXPECT_EQ(first("person", "country", "America"), "United States");
  EXPECT_EQ(first("person", "nationality", "Canada"), "Canadian");
  EXPECT_EQ(first("person", "state", "Alaska", &channel), "AK");
  EXPECT_EQ(channel, "us_state");
  EXPECT_EQ(first("person", "sex", "women", &channel), "F");
  EXPECT_EQ(channel, "gender");
}

TEST_F(ValueMeaningTest, TheColumnDecidesWhichChannelsApply) {
  if (!sources_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  std::string channel;
  EXPECT_EQ(first("countrylanguage", "IsOfficial", "false", &channel), "F");
  EXPECT_EQ(channel, "boolean");
  // "women" is no truth value: IsOfficial takes the boolean channel only.
  const auto found = memory->lookup("people", "countrylanguage", "IsOfficial", "women", 3);
  for (const auto& c : found) EXPECT_NE(c.channel, "gender");
  // A state column is not read as country codes: "Canada" is not 'CA' there.
  for (const auto& c : memory->lookup("people", "person", "state", "Canada", 3)) EXPECT_NE(c.channel, "country");
  // Names are no country codes either.
  for (const auto& c : memory->lookup("people", "person", "name", "France", 3)) EXPECT_NE(c.channel, "country");
}

TEST_F(ValueMeaningTest, WordNetSynonymsWordByWord) {
  if (!sources_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  std::string channel;
  EXPECT_EQ(first("person", "job", "movie editor", &channel), "film editor");
  EXPECT_EQ(channel, "wordnet");
  EXPECT_EQ(first("person", "job", "doctor"), "physician");
}

TEST(ValueFormats, DatesAndNumbersInTheStoredFormat) {
  EXPECT_EQ(written_as_stored("March 3, 2010", "2011-07-14").value_or(""), "2010-03-03");
  EXPECT_EQ(written_as_stored("3 March 2010", "2011-07-14 00:00:00").value_or(""), "2010-03-03 00:00:00");
  EXPECT_EQ(written_as_stored("October 23, 2010", "19-SEP-10").value_or(""), "23-OCT-10");
  EXPECT_EQ(written_as_stored("2010-10-23", "19-SEP-10").value_or(""), "23-OCT-10");
  EXPECT_EQ(written_as_stored("1,000", "2500").value_or(""), "1000");
  EXPECT_EQ(written_as_stored("5k", "2500").value_or(""), "5000");
  EXPECT_EQ(written_as_stored("$1.5 million", "7").value_or(""), "1500000");
  EXPECT_FALSE(written_as_stored("2010-03-03", "2011-07-14"));  // already in the stored format
  EXPECT_FALSE(written_as_stored("Paris", "2011-07-14"));
  EXPECT_FALSE(written_as_stored("March 3, 2010", "Paris"));
  EXPECT_FALSE(parse_written_date("03/04/2010"));  // day or month first: ambiguous
}

TEST_F(ValueMeaningTest, DateAndNumberConditionsRewrittenToTheStoredFormat) {
  std::string channel;
  EXPECT_EQ(first("person", "born", "March 3, 2010", &channel), "2010-03-03");
  EXPECT_EQ(channel, "date");
  const auto dated = correct_values("SELECT name FROM person WHERE born = 'March 3, 2010'", "people", catalog, *memory);
  EXPECT_EQ(dated.sql, "SELECT name FROM person WHERE born = '2010-03-03'");
  const auto paid = correct_values("SELECT name FROM person WHERE salary = '5k'", "people", catalog, *memory);
  EXPECT_EQ(paid.sql, "SELECT name FROM person WHERE salary = 5000");
  ASSERT_EQ(paid.replacements.size(), 1u);
  EXPECT_EQ(paid.replacements[0].channel, "number");
  const auto stored = correct_values("SELECT name FROM person WHERE salary = '1000'", "people", catalog, *memory);
  EXPECT_TRUE(stored.replacements.empty());  // SQLite compares it as a number: stored, left alone
}

TEST_F(ValueMeaningTest, AMoreSpecificValueIsNotReplacedBySpelling) {
  const auto result =
      correct_values("SELECT name FROM person WHERE job = 'senior teacher'", "people", catalog, *memory);
  EXPECT_TRUE(result.replacements.empty());
}

TEST_F(ValueMeaningTest, LearnedAliasComesFirstAndSurvivesSaveLoad) {
  std::string channel;
  first("person", "name", "the boss", &channel);
  EXPECT_NE(channel, "alias");
  const ValueAlias alias = memory->add_alias("people", "PERSON", "Name", "the boss", "Bo Chen", "user", "asked twice");
  EXPECT_EQ(alias.table, "person");
  EXPECT_EQ(alias.uses, 1);
  EXPECT_EQ(first("person", "name", "The Boss", &channel), "Bo Chen");
  EXPECT_EQ(channel, "alias");
  EXPECT_EQ(memory->add_alias("people", "person", "name", "the boss", "Bo Chen", "llm_correction").uses, 2);
  EXPECT_THROW(memory->add_alias("people", "person", "name", "the boss", "Nobody", "user"), Error);
  EXPECT_THROW(memory->add_alias("people", "person", "nope", "the boss", "Bo Chen", "user"), Error);

  memory->save(dir.file("memory"));
  const ValueMemory loaded = ValueMemory::load(dir.file("memory"), memory->shared_encoder());
  ASSERT_EQ(loaded.aliases().size(), 1u);
  EXPECT_EQ(loaded.aliases()[0].source, "llm_correction");
  EXPECT_EQ(loaded.lookup("people", "person", "name", "the boss", 1)[0].value, "Bo Chen");

  EXPECT_TRUE(memory->remove_alias("people", "person", "name", "THE BOSS"));
  EXPECT_FALSE(memory->remove_alias("people", "person", "name", "the boss"));
  first("person", "name", "the boss", &channel);
  EXPECT_NE(channel, "alias");
}

TEST_F(ValueMeaningTest, QuestionLinksReadConceptsAndLearnedAliasesNotSynonyms) {
  if (!sources_present()) GTEST_SKIP() << "iso-codes, wordnet-base or data/values missing";
  const auto linked = [&](const std::string& question) {
    std::vector<std::string> out;
    for (const auto& link : memory->link("people", question))
      out.push_back(link.span + " -> " + link.match.table + "." + link.match.column + " " + link.match.value + " (" +
                    link.match.channel + ")");
    return out;
  };
  const auto has = [](const std::vector<std::string>& links, const std::string& link) {
    return std::find(links.begin(), links.end(), link) != links.end();
  };
  const auto women = linked("How many women were born in Alaska?");
  EXPECT_TRUE(has(women, "women -> person.sex F (gender)"));
  EXPECT_TRUE(has(women, "Alaska -> person.state AK (us_state)"));
  // WordNet synonyms are a lookup's: in a question most words are no value ("movie editors" stays unlinked here).
  for (const auto& link : linked("Which movie editors earn the most?"))
    EXPECT_EQ(link.find("(wordnet)"), std::string::npos) << link;

  EXPECT_FALSE(has(linked("What does the big boss earn?"), "big boss -> person.name Bo Chen (alias)"));
  memory->add_alias("people", "person", "name", "big boss", "Bo Chen", "user");
  EXPECT_TRUE(has(linked("What does the big boss earn?"), "big boss -> person.name Bo Chen (alias)"));
}

TEST(ValueAliases, CorruptFileIsAClearErrorAndAbsentFileIsEmpty) {
  TempDir dir;
  EXPECT_EQ(ValueAliases::load(dir.file("none.json")).size(), 0u);
  std::ofstream(dir.file("bad.json")) << "{\"format\": \"relmem-value-aliases\", \"version\": 1, \"aliases\": [{}]}";
  EXPECT_THROW(ValueAliases::load(dir.file("bad.json")), Error);
  std::ofstream(dir.file("junk.json")) << "not json";
  EXPECT_THROW(ValueAliases::load(dir.file("junk.json")), Error);
}
