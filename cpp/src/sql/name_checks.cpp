// Unknown tables and columns, ambiguous columns, and columns of tables missing from FROM.
#include "checks.hpp"
#include "missing_joins.hpp"
#include "words.hpp"

namespace relmem::sql::checks {
namespace {

std::vector<std::string> table_names(const Schema& schema) {
  std::vector<std::string> names;
  for (const Table& table : schema.tables) names.push_back(table.name);
  return names;
}

std::vector<std::string> column_names(const Source& source) {
  std::vector<std::string> names;
  if (source.table) {
    for (const Column& column : source.table->columns) names.push_back(column.name);
  }
  for (const DerivedColumn& column : source.columns) names.push_back(column.name);
  return names;
}

// Columns of every FROM item visible from `scope`, for suggestions.
std::vector<std::string> visible_columns(const Scope* scope) {
  std::vector<std::string> names;
  for (; scope != nullptr; scope = scope->parent) {
    for (const Source& source : scope->sources) {
      std::vector<std::string> more = column_names(source);
      names.insert(names.end(), more.begin(), more.end());
    }
  }
  return names;
}

// " (for example JOIN t ON item.a = t.b)" for the first of `tables` that a foreign key links to the FROM items of
// `scope` (what relmem::sql::repair_joins would join when it is the only one), or "".
std::string join_example(const std::vector<const Table*>& tables, const Scope* scope) {
  if (scope == nullptr) return "";
  for (const Table* table : tables) {
    std::vector<ForeignKeyLink> links = foreign_key_links(*table, *scope);
    if (!links.empty()) return " (for example " + join_clause(*table, *scope, links.front()) + ")";
  }
  return "";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

class NameChecker {
 public:
  NameChecker(const Query& query, Report& report) : query_(query), schema_(*query.schema()), report_(report) {}

  void run() {
    for (const auto& scope : query_.resolution().scopes()) {
      for (const Source& source : scope->sources) {
        if (source.kind == SourceKind::BaseTable && source.table == nullptr) {
          report_.add(DiagnosticKind::UnknownTable, source.ref->start, source.ref->end,
                      "no table named '" + source.ref->name.text + "' in database '" + schema_.name + "'" +
                          suggestion(source.ref->name.text, table_names(schema_)));
        }
      }
    }
    for_each_expr(query_.select(), [&](const Expr& e) {
      if (e.kind != ExprKind::Column && e.kind != ExprKind::Star) return;
      if (const Binding* binding = query_.resolution().binding(e)) check(e, *binding);
    });
  }

 private:
  void check(const Expr& e, const Binding& binding) {
    std::string written = (e.table.empty() ? "" : e.table.text + ".") + (e.kind == ExprKind::Star ? "*" : e.column.text);
    switch (binding.status) {
      case BindingStatus::UnknownQualifier: unknown_qualifier(e, binding, written); break;
      case BindingStatus::UnknownColumn: unknown_column(e, binding, written); break;
      case BindingStatus::Ambiguous: {
        std::vector<std::string> names;
        for (int index : binding.candidates) names.push_back(binding.scope->sources[index].name);
        report_.add(DiagnosticKind::AmbiguousColumn, e.start, e.end,
                    "column '" + written + "' is ambiguous: " + join_names(names) + " all have it; qualify it");
        break;
      }
      default: break;
    }
  }

  void unknown_qualifier(const Expr& e, const Binding& binding, const std::string& written) {
    const Scope* scope = binding.scope;
    const std::string& qualifier = e.table.text;
    if (const Source* aliased = visible_base_table(scope, qualifier)) {
      report_.add(DiagnosticKind::UnknownTable, e.start, e.end,
                  "table '" + qualifier + "' is named '" + aliased->name + "' in this query; write " + aliased->name +
                      "." + (e.kind == ExprKind::Star ? "*" : e.column.text));
    } else if (const Table* table = schema_.table(qualifier)) {
      report_.add(DiagnosticKind::MissingJoin, e.start, e.end,
                  "'" + written + "' reads table '" + table->name + "', which is not in FROM; join it" +
                      join_example({table}, scope));
    } else {
      std::vector<std::string> names;
      for (const Scope* s = scope; s != nullptr; s = s->parent) {
        for (const Source& source : s->sources) names.push_back(source.name);
      }
      report_.add(DiagnosticKind::UnknownTable, e.start, e.end,
                  "no table or alias named '" + qualifier + "' in FROM" + suggestion(qualifier, names));
    }
  }

  void unknown_column(const Expr& e, const Binding& binding, const std::string& written) {
    const std::string& column = e.column.text;
    if (binding.scope != nullptr && binding.source >= 0) {  // qualified, and the FROM item lacks it
      const Source& source = binding.scope->sources[binding.source];
      std::string what = source.table ? "table '" + source.table->name + "'" : "'" + source.name + "'";
      report_.add(DiagnosticKind::UnknownColumn, e.start, e.end,
                  what + " has no column '" + column + "'" + suggestion(column, column_names(source)));
      return;
    }
    const Scope* scope = binding.scope;
    std::vector<const Table*> owner_tables = tables_missing_with_column(schema_, scope, column);
    std::vector<std::string> owners;
    for (const Table* table : owner_tables) owners.push_back(table->name);
    if (!owners.empty()) {
      report_.add(DiagnosticKind::MissingJoin, e.start, e.end,
                  "column '" + written + "' belongs to " + (owners.size() == 1 ? "table " : "tables ") +
                      join_names(owners) + ", not in FROM; join " + (owners.size() == 1 ? "it" : "one of them") +
                      join_example(owner_tables, scope));
      return;
    }
    report_.add(DiagnosticKind::UnknownColumn, e.start, e.end,
                "no column named '" + written + "' in the tables of this query" +
                    suggestion(column, visible_columns(scope)));
  }

  const Query& query_;
  const Schema& schema_;
  Report& report_;
};

}  // namespace

void check_names(const Query& query, Report& report) { NameChecker(query, report).run(); }

}  // namespace relmem::sql::checks
