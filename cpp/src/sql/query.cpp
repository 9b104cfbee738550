#include "relmem/sql/query.hpp"

#include <algorithm>

#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "words.hpp"

namespace relmem::sql {

Query::State::State(std::string text, std::optional<Schema> schema_copy)
    : sql(std::move(text)),
      schema(std::move(schema_copy)),
      select(parse(sql)),
      resolution(select, schema ? &*schema : nullptr) {}

Query::Query(std::string sql, std::optional<Schema> schema)
    : state_(std::make_shared<const State>(std::move(sql), std::move(schema))) {}

std::vector<std::string> Query::tables() const {
  std::vector<const Source*> sources;
  for (const auto& scope : resolution().scopes()) {
    for (const Source& source : scope->sources) {
      if (source.kind == SourceKind::BaseTable) sources.push_back(&source);
    }
  }
  std::stable_sort(sources.begin(), sources.end(),
                   [](const Source* a, const Source* b) { return a->ref->start < b->ref->start; });
  std::vector<std::string> names;
  for (const Source* source : sources) {
    std::string name = source->table ? source->table->name : source->ref->name.text;
    bool seen = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return iequals(n, name); });
    if (!seen) names.push_back(name);
  }
  return names;
}

bool Query::returns_counts_only() const {
  const auto& columns = select().cores.front().columns;
  return !columns.empty() && std::all_of(columns.begin(), columns.end(), [](const ResultColumn& column) {
    const Expr& expr = *column.expr;
    return expr.kind == ExprKind::Function && is_aggregate_call(expr) && iequals(expr.op, "count");
  });
}

std::string Query::render() const { return relmem::sql::render(select()); }

std::string Query::rewrite_literals(const std::map<int, LiteralValue>& replacements) const {
  return relmem::sql::rewrite_literals(sql(), replacements);
}

}  // namespace relmem::sql
