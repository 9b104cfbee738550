#include "missing_joins.hpp"

#include "relmem/sql/render.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

std::string quoted(const std::string& name) { return render_name(Name{name, 0}); }

}  // namespace

const Source* visible_base_table(const Scope* scope, const std::string& table) {
  for (; scope != nullptr; scope = scope->parent) {
    for (const Source& source : scope->sources) {
      if (source.kind == SourceKind::BaseTable && iequals(source.ref->name.text, table)) return &source;
    }
  }
  return nullptr;
}

std::vector<const Table*> tables_missing_with_column(const Schema& schema, const Scope* scope,
                                                     const std::string& column) {
  std::vector<const Table*> tables;
  for (const Table& table : schema.tables) {
    if (table.column(column) != nullptr && visible_base_table(scope, table.name) == nullptr) tables.push_back(&table);
  }
  return tables;
}

std::vector<ForeignKeyLink> foreign_key_links(const Table& table, const Scope& scope) {
  std::vector<ForeignKeyLink> found;
  for (size_t i = 0; i < scope.sources.size(); ++i) {
    const Source& source = scope.sources[i];
    if (source.kind != SourceKind::BaseTable || source.table == nullptr) continue;
    for (const ForeignKey& key : table.foreign_keys) {
      if (!iequals(key.to_table, source.table->name)) continue;
      std::string to = referenced_column(key, *source.table);
      if (!to.empty()) found.push_back(ForeignKeyLink{static_cast<int>(i), to, key.from_column});
    }
    for (const ForeignKey& key : source.table->foreign_keys) {
      if (!iequals(key.to_table, table.name)) continue;
      std::string to = referenced_column(key, table);
      if (!to.empty()) found.push_back(ForeignKeyLink{static_cast<int>(i), key.from_column, to});
    }
  }
  return found;
}

std::string join_clause(const Table& table, const Scope& scope, const ForeignKeyLink& link) {
  return "JOIN " + quoted(table.name) + " ON " + quoted(scope.sources[link.source].name) + "." +
         quoted(link.item_column) + " = " + quoted(table.name) + "." + quoted(link.table_column);
}

}  // namespace relmem::sql
