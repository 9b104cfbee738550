#include "missing_joins.hpp"

#include <algorithm>

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

size_t end_of_from(const SelectCore& core, const std::vector<Token>& tokens) {
  const TableRef& last = core.from.back();
  size_t end = last.end;
  auto next = [&](size_t offset) {
    return std::lower_bound(tokens.begin(), tokens.end(), offset,
                            [](const Token& token, size_t at) { return token.start < at; });
  };
  if (!last.alias.empty()) {
    auto token = next(end);
    if (token->kind == TokenKind::Word && iequals(token->text, "AS")) ++token;
    end = token->end;
  }
  if (last.on) end = last.on->end;
  if (!last.using_columns.empty()) {
    auto token = next(end);
    while (!(token->kind == TokenKind::Operator && token->text == ")") && token->kind != TokenKind::End) ++token;
    end = token->end;
  }
  return end;
}

std::vector<TextEdit> qualifiers_for_join(const Select& select, const Resolution& resolution, const Scope* scope,
                                          const Table& table) {
  std::vector<TextEdit> edits;
  for_each_expr(select, [&](const Expr& e) {
    if (e.kind != ExprKind::Column || !e.table.empty()) return;
    const Binding* binding = resolution.binding(e);
    if (binding == nullptr || binding->status != BindingStatus::Resolved || binding->source < 0) return;
    if (binding->scope != scope || table.column(e.column.text) == nullptr) return;
    edits.push_back({e.start, e.start, quoted(binding->scope->sources[binding->source].name) + "."});
  });
  return edits;
}

}  // namespace relmem::sql
