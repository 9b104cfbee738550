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
  std::string lexical_card;              // Catalog::card (with sample values and the description)
  std::vector<std::string> lexical_table_cards;  // Catalog::table_card
  // With WordNet, both lexical texts end in a line of other words for their tables' and columns' names
  // (schema_words.hpp): "also: vocalist vocalizer ...".
  // Normalized (normalize_value) distinct text values of every column, at most values_per_column of each, without
  // numbers and values longer than options.max_value_chars: what a question may quote ("Anguilla", "Republic").
  std::vector<std::string> values;
};

// options.description, when set, goes into both cards; example questions too. `wordnet`: null for no synonyms.
DatabaseTexts database_texts(const Catalog& catalog, const std::string& db, const CardOptions& options,
                             const std::vector<std::string>& example_questions = {}, int64_t values_per_column = 0,
                             const WordNet* wordnet = nullptr);

}  // namespace relmem
