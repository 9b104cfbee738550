#include "relmem/memories/database_texts.hpp"

#include <string>

namespace relmem {
namespace {

std::string table_summary(const Table& table) {
  std::string out = humanize_identifier(table.name) + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) out += (i ? ", " : "") + humanize_identifier(table.columns[i].name);
  return out + ")";
}

}  // namespace

DatabaseTexts database_texts(const Catalog& catalog, const std::string& db, const CardOptions& options,
                             const std::vector<std::string>& example_questions) {
  const Schema& schema = catalog.schema(db);
  DatabaseTexts texts;
  texts.name = db;
  const std::string header = "database " + humanize_identifier(schema.name) + ": ";
  std::string preface;
  if (!options.description.empty()) preface += options.description + ". ";
  if (!example_questions.empty()) {
    preface += "example questions:";
    for (const auto& q : example_questions) preface += " " + q;
    preface += " ";
  }
  texts.card = header + preface;
  for (size_t i = 0; i < schema.tables.size(); ++i) texts.card += (i ? "; " : "") + table_summary(schema.tables[i]);
  texts.lexical_card = catalog.card(db, options);
  if (!example_questions.empty()) texts.lexical_card += preface + "\n";
  for (const auto& table : schema.tables) {
    texts.table_names.push_back(table.name);
    texts.table_cards.push_back(header + table_summary(table));
    texts.lexical_table_cards.push_back(catalog.table_card(db, table.name, options));
  }
  return texts;
}

}  // namespace relmem
