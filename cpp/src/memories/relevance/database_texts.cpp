#include "relmem/memories/relevance/database_texts.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <variant>

#include "relmem/memories/text/schema_words.hpp"
#include "relmem/memories/text/string_similarity.hpp"

namespace relmem {
namespace {

std::string table_summary(const Table& table, const WordNet* wordnet) {
  std::string out = readable_identifier(table.name, wordnet) + " (";
  for (size_t i = 0; i < table.columns.size(); ++i)
    out += (i ? ", " : "") + readable_identifier(table.columns[i].name, wordnet);
  return out + ")";
}

std::vector<std::string> stored_values(const Catalog& catalog, const std::string& db, int64_t per_column,
                                       int max_chars) {
  std::vector<std::string> values;
  if (per_column <= 0) return values;
  for (const auto& table : catalog.schema(db).tables) {
    for (const auto& column : table.columns) {
      for (const Value& value : catalog.distinct_values(db, table.name, column.name, per_column)) {
        const auto* text = std::get_if<std::string>(&value);
        if (!text || text->size() > static_cast<size_t>(max_chars)) continue;
        std::string normalized = normalize_value(*text);
        const bool has_letter = std::any_of(normalized.begin(), normalized.end(),
                                            [](unsigned char c) { return std::isalpha(c) || c >= 0x80; });
        if (has_letter) values.push_back(std::move(normalized));
      }
    }
  }
  return values;
}

// "also: <synonyms>\n" of the table's name and its columns' names; "" when there are none.
std::string synonym_line(const Table& table, const WordNet* wordnet) {
  std::vector<std::string> identifiers{table.name};
  for (const auto& column : table.columns) identifiers.push_back(column.name);
  const std::string synonyms = schema_synonyms(identifiers, wordnet);
  return synonyms.empty() ? "" : "also: " + synonyms + "\n";
}

}  // namespace

DatabaseTexts database_texts(const Catalog& catalog, const std::string& db, const CardOptions& options,
                             const std::vector<std::string>& example_questions, int64_t values_per_column,
                             const WordNet* wordnet) {
  const Schema& schema = catalog.schema(db);
  DatabaseTexts texts;
  texts.name = db;
  // The database's name heads its card only: in every table text too, any question with one of its words matched
  // every table of the database named by that word.
  const std::string header = "database " + humanize_identifier(schema.name) + ": ";
  std::string preface;
  if (!options.description.empty()) preface += options.description + ". ";
  if (!example_questions.empty()) {
    preface += "example questions:";
    for (const auto& q : example_questions) preface += " " + q;
    preface += " ";
  }
  texts.card = header + preface;
  for (size_t i = 0; i < schema.tables.size(); ++i) texts.card += (i ? "; " : "") + table_summary(schema.tables[i], wordnet);
  texts.lexical_card = catalog.card(db, options);
  if (!example_questions.empty()) texts.lexical_card += preface + "\n";
  for (const auto& table : schema.tables) {
    const std::string synonyms = synonym_line(table, wordnet);
    texts.lexical_card += synonyms;
    texts.table_names.push_back(table.name);
    texts.table_cards.push_back(table_summary(table, wordnet));
    texts.lexical_table_cards.push_back(catalog.table_card(db, table.name, options) + synonyms);
    for (const auto& column : table.columns)
      texts.column_cards.push_back(readable_identifier(table.name, wordnet) + " " +
                                   readable_identifier(column.name, wordnet));
    texts.table_columns.push_back(static_cast<int64_t>(table.columns.size()));
  }
  texts.values = stored_values(catalog, db, values_per_column, options.max_value_chars);
  return texts;
}

}  // namespace relmem
