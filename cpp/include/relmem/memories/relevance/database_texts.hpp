#pragma once
// The texts the selection memory embeds for one database. The sentence encoder reads at most ~128 tokens, so its
// texts are compact (names of tables and columns, plus the optional description and example questions first);
// the lexical encoder reads everything, so its texts are the catalog's full cards with sample values.
#include <cstdint>
#include <string>
#include <vector>

#include "relmem/catalog/catalog.hpp"
#include "relmem/memories/text/wordnet.hpp"

namespace relmem {

struct DatabaseTexts {
  std::string name;
  std::string card;                      // "database concert singer: stadium (name, capacity); singer (...)"
  std::vector<std::string> table_names;
  std::vector<std::string> table_cards;  // "singer (name, country, age)": the database's name is in the card only
  std::vector<std::string> column_cards;  // "singer country", one per column of every table in order
  std::vector<int64_t> table_columns;     // per table: how many of column_cards are its columns
  // Questions one could ask of each table, in table order (question_forms).
  std::vector<std::string> question_forms;
  std::string lexical_card;              // Catalog::card (with sample values and the description)
  std::vector<std::string> lexical_table_cards;  // Catalog::table_card
  // With WordNet, both lexical texts end in a line of other words for their tables' and columns' names
  // (schema_words.hpp): "also: vocalist vocalizer ...".
  // Normalized (normalize_value) distinct text values of every column, at most values_per_column of each, without
  // numbers and values longer than options.max_value_chars: what a question may quote ("Anguilla", "Republic").
  std::vector<std::string> values;
};

// Questions one could ask of one table: "How many singer are there?", then its columns other than ids three at a
// time, "What are the name, country, age of each singer?"; with WordNet, the same forms again with each schema word
// as its most frequent noun sense's first synonym ("How many vocalist are there?"), where that changes them. A
// question embeds closer to a question about the same things than to a list of names, and the synonym forms keep a
// question that names things with other words from losing by it.
std::vector<std::string> question_forms(const Table& table, const WordNet* wordnet);

// options.description, when set, goes into both cards; example questions too. `wordnet`: null for no synonyms.
DatabaseTexts database_texts(const Catalog& catalog, const std::string& db, const CardOptions& options,
                             const std::vector<std::string>& example_questions = {}, int64_t values_per_column = 0,
                             const WordNet* wordnet = nullptr);

}  // namespace relmem
