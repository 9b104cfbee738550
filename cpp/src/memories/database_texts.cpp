#include "relmem/memories/database_texts.hpp"

#include <cctype>

namespace relmem {
namespace {

// "StadiumCapacity_2019" -> "stadium capacity 2019", as the catalog's cards write identifiers.
std::string words(const std::string& identifier) {
  std::string out;
  for (size_t i = 0; i < identifier.size(); ++i) {
    const unsigned char c = identifier[i];
    const bool boundary = i > 0 && std::isupper(c) && std::islower(static_cast<unsigned char>(identifier[i - 1]));
    if (c == '_' || c == '-' || c == ' ' || boundary) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      if (boundary) out += static_cast<char>(std::tolower(c));
    } else {
      out += static_cast<char>(std::tolower(c));
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string table_summary(const Table& table) {
  std::string out = words(table.name) + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) out += (i ? ", " : "") + words(table.columns[i].name);
  return out + ")";
}

}  // namespace

DatabaseTexts database_texts(const Catalog& catalog, const std::string& db, const CardOptions& options,
                             const std::vector<std::string>& example_questions) {
  const Schema& schema = catalog.schema(db);
  DatabaseTexts texts;
  texts.name = db;
  const std::string header = "database " + words(schema.name) + ": ";
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
