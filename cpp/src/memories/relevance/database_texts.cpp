#include "relmem/memories/relevance/database_texts.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <unordered_set>
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

bool is_id(const std::string& column) {
  return column.size() >= 2 && std::tolower(static_cast<unsigned char>(column[column.size() - 2])) == 'i' &&
         std::tolower(static_cast<unsigned char>(column.back())) == 'd';
}

// A schema word as its most frequent noun sense's first other word in WordNet ("singer" -> "vocalist"); words too
// common in schemas to stand for one thing, function words and words of two letters stay (the words that
// relmem.bench.synonyms leaves as they are).
std::string synonym_of(const std::string& word, const WordNet& wordnet) {
  static const std::unordered_set<std::string> kKept = {
      "id", "name", "names", "type", "code", "date", "number", "the", "and", "of", "for", "other", "details",
      "detail", "value", "key", "year", "time", "count", "total", "average", "max", "min", "in", "on", "at", "to",
      "by", "is", "are", "be", "or", "as", "it", "its", "with", "from", "who", "what", "which", "how", "all", "each",
      "do", "does", "did", "has", "have", "had", "not", "no", "yes", "one", "first", "last", "more", "most", "than",
      "that", "this", "these", "those", "there", "their", "they", "he", "she", "his", "her", "was", "were", "many",
      "much", "any", "some", "per", "out", "up"};
  if (word.size() <= 2 || kKept.count(word)) return word;
  std::string base = wordnet.base_form(word);
  if (base.empty()) base = word;
  for (const auto& synonym : wordnet.synonyms(base, 1, /*nouns=*/true)) {
    const bool ascii = std::all_of(synonym.begin(), synonym.end(), [](unsigned char c) { return c < 0x80; });
    if (synonym != base && ascii) return synonym;
  }
  return word;
}

// The words of a readable name, each as synonym_of() writes it.
std::string with_synonyms(const std::string& words, const WordNet& wordnet) {
  std::istringstream in(words);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + synonym_of(word, wordnet);
  return out;
}

// "How many <name> are there?", then "What are the <three columns> of each <name>?" for every three columns.
std::vector<std::string> forms_of(const std::string& name, const std::vector<std::string>& columns) {
  std::vector<std::string> forms{"How many " + name + " are there?"};
  for (size_t i = 0; i < columns.size(); i += 3) {
    std::string listed;
    for (size_t j = i; j < columns.size() && j < i + 3; ++j) listed += (j > i ? ", " : "") + columns[j];
    forms.push_back("What are the " + listed + " of each " + name + "?");
  }
  return forms;
}

}  // namespace

std::vector<std::string> question_forms(const Table& table, const WordNet* wordnet) {
  const std::string name = readable_identifier(table.name, wordnet);
  std::vector<std::string> columns;
  for (const auto& column : table.columns)
    if (!is_id(column.name)) columns.push_back(readable_identifier(column.name, wordnet));
  std::vector<std::string> forms = forms_of(name, columns);
  if (!wordnet) return forms;
  std::vector<std::string> synonym_columns;
  for (const auto& column : columns) synonym_columns.push_back(with_synonyms(column, *wordnet));
  for (auto& form : forms_of(with_synonyms(name, *wordnet), synonym_columns))
    if (std::find(forms.begin(), forms.end(), form) == forms.end()) forms.push_back(std::move(form));
  return forms;
}

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
    for (auto& form : question_forms(table, wordnet)) texts.question_forms.push_back(std::move(form));
  }
  texts.values = stored_values(catalog, db, values_per_column, options.max_value_chars);
  return texts;
}

}  // namespace relmem
