// WordNet from its database files (a small hand-made copy in the real format, and Debian's wordnet-base when
// installed), and what is built on it: the schema-word synonyms and the value memory's WordNet channel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "relmem/common.hpp"
#include "relmem/memories/text/schema_words.hpp"
#include "relmem/memories/text/wordnet.hpp"
#include "relmem/memories/values/value_lexicon.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

const std::string kLicense = "  1 This software and database is being provided\n";

std::string offset_field(size_t offset) {
  char field[16];
  std::snprintf(field, sizeof(field), "%08zu", offset);
  return field;
}

// Writes a data file whose lines start at the byte offsets the index names, and returns the offsets.
std::vector<size_t> write_data(const std::string& path, const std::vector<std::string>& synsets) {
  std::string text = kLicense;
  std::vector<size_t> offsets;
  for (const auto& synset : synsets) {
    offsets.push_back(text.size());
    text += offset_field(text.size()) + " " + synset + "\n";
  }
  relmem_test::write_bytes(path, text);
  return offsets;
}

// A WordNet of three nouns (musician; singer, a kind of musician: one sense; country: two), one adjective and no
// verbs or adverbs.
std::string make_wordnet(const relmem_test::TempDir& dir) {
  const std::string folder = dir.file("wordnet");
  std::filesystem::create_directories(folder);
  const std::string musician = offset_field(kLicense.size());  // the first synset
  const auto nouns = write_data(folder + "/data.noun",
                                {"18 n 01 musician 0 000 | artist who plays music",
                                 "18 n 03 singer 0 vocalist 0 vocaliser 0 001 @ " + musician + " n 0000 | who sings",
                                 "15 n 03 country 0 state 0 nation 0 000 | a politically organized body",
                                 "15 n 02 country 0 land 0 000 | the territory"});
  relmem_test::write_bytes(folder + "/index.noun",
                           kLicense + "musician n 1 0 1 0 " + std::to_string(nouns[0]) + "\n"
                           "singer n 1 1 @ 1 0 " + std::to_string(nouns[1]) + "\n"
                           "vocalist n 1 1 @ 1 0 " + std::to_string(nouns[1]) + "\n"
                           "country n 2 1 @ 2 0 " + std::to_string(nouns[2]) + " " + std::to_string(nouns[3]) + "\n");
  const auto adjectives = write_data(folder + "/data.adj", {"00 a 02 pet(a) 0 favourite 0 000 | preferred"});
  relmem_test::write_bytes(folder + "/index.adj", "pet a 1 0 1 0 " + std::to_string(adjectives[0]) + "\n");
  relmem_test::write_bytes(folder + "/index.verb", "");
  relmem_test::write_bytes(folder + "/data.verb", "");
  relmem_test::write_bytes(folder + "/index.adv", "");
  relmem_test::write_bytes(folder + "/data.adv", "");
  relmem_test::write_bytes(folder + "/noun.exc", "geese goose\n");
  return folder;
}

}  // namespace

TEST(WordNet, ReadsSensesAndBaseForms) {
  relmem_test::TempDir dir;
  const std::string folder = make_wordnet(dir);
  ASSERT_TRUE(WordNet::available(folder));
  const WordNet wordnet(folder);
  EXPECT_TRUE(wordnet.contains("Singer"));
  EXPECT_EQ(wordnet.base_form("singers"), "singer");
  EXPECT_EQ(wordnet.base_form("countries"), "country");
  EXPECT_EQ(wordnet.base_form("geese"), "goose");
  EXPECT_EQ(wordnet.base_form("unknowns"), "");
  EXPECT_EQ(wordnet.synonyms("singers"), (std::vector<std::string>{"vocalist", "vocaliser"}));
  EXPECT_EQ(wordnet.synonyms("country"), (std::vector<std::string>{"state", "nation"}));
  EXPECT_EQ(wordnet.synonyms("country", 2), (std::vector<std::string>{"state", "nation", "land"}));
  EXPECT_EQ(wordnet.synonyms("pet"), std::vector<std::string>{"favourite"});  // adjective marker "(a)" dropped
  EXPECT_TRUE(wordnet.synonyms("nothing").empty());
}

TEST(WordNet, SynsetsAndExceptionsAsWritten) {
  relmem_test::TempDir dir;
  const WordNet wordnet(make_wordnet(dir));
  const auto& synsets = wordnet.synsets();
  ASSERT_EQ(synsets.size(), 5u);  // nouns in file order, then the adjective
  EXPECT_EQ(synsets[1].words, (std::vector<std::string>{"singer", "vocalist", "vocaliser"}));
  ASSERT_EQ(synsets[1].broader.size(), 1u);  // the "@" pointer to musician
  EXPECT_EQ(synsets[1].broader[0].synset, 0u);
  EXPECT_TRUE(synsets[1].broader[0].hypernym);
  EXPECT_TRUE(synsets[0].broader.empty());
  EXPECT_EQ(synsets[4].words, (std::vector<std::string>{"pet", "favourite"}));
  ASSERT_EQ(wordnet.exceptions(0).size(), 1u);
  EXPECT_EQ(wordnet.exceptions(0)[0].inflected, "geese");
  EXPECT_EQ(wordnet.exceptions(0)[0].bases, std::vector<std::string>{"goose"});
  EXPECT_TRUE(wordnet.exceptions(1).empty());
}

// The value memory's meaning channels read WordNet through the same reader.
TEST(WordNet, ValueLexiconReadsTheSameSynsets) {
  relmem_test::TempDir dir;
  const ValueLexicon lexicon = ValueLexicon::load({dir.file("no-iso"), make_wordnet(dir), dir.file("no-data")});
  EXPECT_EQ(lexicon.synsets(), 5u);
  EXPECT_EQ(lexicon.missing_sources().size(), 2u);  // iso-codes and the data files, not WordNet
  const auto synonyms = lexicon.synonyms_of("singer");
  ASSERT_EQ(synonyms.size(), 3u);
  EXPECT_EQ(synonyms[0].key, "vocalist");
  EXPECT_EQ(synonyms[0].links, 0);  // the same synset
  EXPECT_EQ(synonyms[1].key, "vocaliser");
  EXPECT_EQ(synonyms[2].key, "musician");
  EXPECT_EQ(synonyms[2].links, 1);  // its hypernym
  const auto narrower = lexicon.synonyms_of("musician");
  ASSERT_EQ(narrower.size(), 3u);  // singer's words, through the pointer read backwards
  EXPECT_EQ(narrower[0].links, 1);
  const ValueLexicon without = ValueLexicon::load({dir.file("no-iso"), dir.file("none"), dir.file("no-data")});
  EXPECT_EQ(without.synsets(), 0u);
  EXPECT_EQ(without.missing_sources().size(), 3u);
}

// Two parties, kinds of one party; two adjectives that pertain to them; "bad" the antonym of "good".
std::string make_contrast_wordnet(const relmem_test::TempDir& dir) {
  const std::string folder = dir.file("contrast");
  std::filesystem::create_directories(folder);
  const std::string party = offset_field(kLicense.size());
  const auto nouns = write_data(folder + "/data.noun",
                                {"14 n 01 party 0 000 | an organization to gain political power",
                                 "14 n 01 Republican_Party 0 001 @ " + party + " n 0000 | one party",
                                 "14 n 01 Democratic_Party 0 001 @ " + party + " n 0000 | another party"});
  const std::string good = offset_field(kLicense.size());
  const auto adjectives = write_data(
      folder + "/data.adj",
      {"00 a 01 good 0 000 | having desirable qualities", "00 a 01 bad 0 001 ! " + good + " a 0101 | not good",
       "01 a 01 republican 0 001 \\ " + offset_field(nouns[1]) + " n 0101 | of the Republican Party",
       "01 a 01 democratic 0 001 \\ " + offset_field(nouns[2]) + " n 0101 | of the Democratic Party"});
  std::string index_noun = kLicense, index_adj = kLicense;
  const char* noun_names[] = {"party", "republican_party", "democratic_party"};
  for (size_t i = 0; i < nouns.size(); ++i)
    index_noun += std::string(noun_names[i]) + " n 1 0 1 0 " + std::to_string(nouns[i]) + "\n";
  const char* adjective_names[] = {"good", "bad", "republican", "democratic"};
  for (size_t i = 0; i < adjectives.size(); ++i)
    index_adj += std::string(adjective_names[i]) + " a 1 0 1 0 " + std::to_string(adjectives[i]) + "\n";
  relmem_test::write_bytes(folder + "/index.noun", index_noun);
  relmem_test::write_bytes(folder + "/index.adj", index_adj);
  for (const char* part : {"verb", "adv"}) {
    relmem_test::write_bytes(folder + "/index." + std::string(part), "");
    relmem_test::write_bytes(folder + "/data." + std::string(part), "");
  }
  return folder;
}

// Antonyms and pertainyms are read apart from the broader synsets; the value lexicon tells contrasting words by them.
TEST(WordNet, AntonymsPertainymsAndContrastingWords) {
  relmem_test::TempDir dir;
  const std::string folder = make_contrast_wordnet(dir);
  const WordNet wordnet(folder);
  const auto& synsets = wordnet.synsets();
  ASSERT_EQ(synsets.size(), 7u);
  EXPECT_EQ(synsets[1].broader.size(), 1u);  // Republican Party is a kind of party
  EXPECT_EQ(synsets[4].antonyms, std::vector<uint32_t>{3});  // bad / good
  EXPECT_TRUE(synsets[4].broader.empty());
  EXPECT_EQ(synsets[5].pertains_to, std::vector<uint32_t>{1});  // republican / Republican Party
  const ValueLexicon lexicon = ValueLexicon::load({dir.file("no-iso"), folder, dir.file("no-data")});
  EXPECT_TRUE(lexicon.contrasts("republican", "democratic"));  // the parties they pertain to are siblings
  EXPECT_TRUE(lexicon.contrasts("republicanparty", "democraticparty"));
  EXPECT_TRUE(lexicon.contrasts("good", "bad"));  // antonyms, either way round
  EXPECT_TRUE(lexicon.contrasts("bad", "good"));
  EXPECT_FALSE(lexicon.contrasts("republicanparty", "party"));  // a kind of it, not a sibling
  EXPECT_FALSE(lexicon.contrasts("good", "good"));
  EXPECT_FALSE(lexicon.contrasts("good", "unlisted"));
}

TEST(WordNet, MissingFilesAreAClearError) {
  relmem_test::TempDir dir;
  EXPECT_FALSE(WordNet::available(dir.file("none")));
  EXPECT_THROW(WordNet(dir.file("none")), Error);
}

TEST(SchemaWords, IdentifiersAreSplitAndAbbreviationsExpanded) {
  EXPECT_EQ(identifier_words("stu_fname"), (std::vector<std::string>{"stu", "student", "fname", "first", "name"}));
  EXPECT_EQ(identifier_words("CountryName"), (std::vector<std::string>{"country", "name"}));
}

TEST(SchemaWords, SynonymsOfNamesWithoutTheNamesThemselves) {
  relmem_test::TempDir dir;
  const WordNet wordnet(make_wordnet(dir));
  EXPECT_EQ(schema_synonyms({"singer", "Country", "stu_fname"}, &wordnet),
            "vocalist vocaliser state nation student first name");
  EXPECT_EQ(schema_synonyms({"singer"}, nullptr), "");
}

TEST(SchemaWords, CompoundWordsAreSplitIntoListedWords) {
  relmem_test::TempDir dir;
  const WordNet wordnet(make_wordnet(dir));
  EXPECT_EQ(compound_split("countrysinger", wordnet), "country singer");
  EXPECT_EQ(compound_split("countrysingers", wordnet), "country singers");  // an inflected part
  EXPECT_EQ(compound_split("petid", wordnet), "pet id");
  EXPECT_EQ(compound_split("dcountry", wordnet), "d country");  // an initial
  EXPECT_EQ(compound_split("singers", wordnet), "");  // listed (inflected)
  EXPECT_EQ(compound_split("musicianship", wordnet), "");  // no split into listed words
  EXPECT_EQ(compound_split("fname", wordnet), "");  // an abbreviation, expanded elsewhere
  EXPECT_EQ(readable_identifier("CountrySinger_countrysinger", &wordnet), "country singer country singer");
  EXPECT_EQ(readable_identifier("countrysinger", nullptr), "countrysinger");
  EXPECT_EQ(schema_synonyms({"countrysinger"}, &wordnet), "country state nation singer vocalist vocaliser");
}

TEST(WordNet, DebiansWordNetWhenInstalled) {
  if (!WordNet::available()) GTEST_SKIP() << "WordNet is not installed (Debian: wordnet-base)";
  const WordNet* wordnet = WordNet::shared();
  ASSERT_NE(wordnet, nullptr);
  EXPECT_EQ(wordnet->base_form("vocalists"), "vocalist");
  const auto synonyms = wordnet->synonyms("country");
  EXPECT_NE(std::find(synonyms.begin(), synonyms.end(), "nation"), synonyms.end());
  EXPECT_EQ(wordnet->attributes("tallest"), (std::vector<std::string>{"stature", "height"}));
  EXPECT_EQ(wordnet->attributes("oldest"), std::vector<std::string>{"age"});
  EXPECT_EQ(wordnet->attributes("longest"), (std::vector<std::string>{"duration", "length"}));  // also an adverb
  EXPECT_TRUE(wordnet->attributes("singer").empty());                                        // not an adjective
  EXPECT_EQ(compound_split("countrylanguage", *wordnet), "country language");
  EXPECT_EQ(compound_split("hiredate", *wordnet), "hire date");  // not "hired ate"
  EXPECT_EQ(compound_split("yearid", *wordnet), "year id");      // not "yea rid"
  EXPECT_EQ(compound_split("dphone", *wordnet), "d phone");      // not "dph one"
}
