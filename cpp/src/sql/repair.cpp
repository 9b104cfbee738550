#include "relmem/sql/repair.hpp"

#include <algorithm>

#include "relmem/sql/lexer.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/resolve.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

bool has_column(const Source& source, const std::string& column) {
  if (source.kind == SourceKind::BaseTable) return source.table->column(column) != nullptr;
  return std::any_of(source.columns.begin(), source.columns.end(),
                     [&](const DerivedColumn& derived) { return iequals(derived.name, column); });
}

// The one other FROM item of the qualifier's SELECT that has the column, when its name alone designates it.
const Source* owner(const Binding& binding, const std::string& column) {
  const std::vector<Source>& sources = binding.scope->sources;
  const Source* found = nullptr;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (static_cast<int>(i) == binding.source) continue;
    if (!sources[i].columns_known) return nullptr;  // it may have the column too
    if (!has_column(sources[i], column)) continue;
    if (found != nullptr) return nullptr;
    found = &sources[i];
  }
  if (found == nullptr || found->name.empty()) return nullptr;
  auto same_name = [&](const Source& source) { return iequals(source.name, found->name); };
  return std::count_if(sources.begin(), sources.end(), same_name) == 1 ? found : nullptr;
}

// The token of a qualified column's table name: [schema .] table . column
const Token& qualifier_token(const std::vector<Token>& tokens, const Expr& column) {
  auto first = std::lower_bound(tokens.begin(), tokens.end(), column.start,
                                [](const Token& token, size_t offset) { return token.start < offset; });
  return column.schema.empty() ? *first : *(first + 2);
}

}  // namespace

QualifierRepair repair_qualifiers(const std::string& sql, const Schema& schema) {
  Select select = parse(sql);
  Resolution resolution(select, &schema);
  std::vector<Token> tokens = tokenize(sql);
  QualifierRepair out;
  for_each_expr(select, [&](const Expr& e) {
    if (e.kind != ExprKind::Column || e.table.empty()) return;
    const Binding* binding = resolution.binding(e);
    if (binding == nullptr || binding->status != BindingStatus::UnknownColumn || binding->source < 0 ||
        binding->outer) {
      return;
    }
    const Source* source = owner(*binding, e.column.text);
    if (source == nullptr) return;
    const Token& token = qualifier_token(tokens, e);
    out.repairs.push_back(QualifierFix{e.column.text, sql.substr(token.start, token.end - token.start),
                                       render_name(Name{source->name, e.table.quote}), token.start, token.end});
  });
  std::sort(out.repairs.begin(), out.repairs.end(),
            [](const QualifierFix& a, const QualifierFix& b) { return a.start < b.start; });
  size_t copied = 0;
  for (const QualifierFix& fix : out.repairs) {
    out.sql.append(sql, copied, fix.start - copied);
    out.sql += fix.replacement;
    copied = fix.end;
  }
  out.sql.append(sql, copied, std::string::npos);
  return out;
}

}  // namespace relmem::sql
