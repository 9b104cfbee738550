#include "relmem/sql/repair.hpp"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "relmem/sql/lexer.hpp"
#include "relmem/sql/parser.hpp"
#include "relmem/sql/render.hpp"
#include "relmem/sql/resolve.hpp"
#include "splice.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

bool has_column(const Source& source, const std::string& column) {
  if (source.kind == SourceKind::BaseTable) return source.table->column(column) != nullptr;
  return std::any_of(source.columns.begin(), source.columns.end(),
                     [&](const DerivedColumn& derived) { return iequals(derived.name, column); });
}

// The index of the one other FROM item of the qualifier's SELECT that has the column, when its name alone designates
// it; -1 otherwise.
int owner(const Binding& binding, const std::string& column) {
  const std::vector<Source>& sources = binding.scope->sources;
  int found = -1;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (static_cast<int>(i) == binding.source) continue;
    if (!sources[i].columns_known) return -1;  // it may have the column too
    if (!has_column(sources[i], column)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  if (found < 0 || sources[found].name.empty()) return -1;
  auto same_name = [&](const Source& source) { return iequals(source.name, sources[found].name); };
  return std::count_if(sources.begin(), sources.end(), same_name) == 1 ? found : -1;
}

// The token of a qualified column's table name: [schema .] table . column
const Token& qualifier_token(const std::vector<Token>& tokens, const Expr& column) {
  auto first = std::lower_bound(tokens.begin(), tokens.end(), column.start,
                                [](const Token& token, size_t offset) { return token.start < offset; });
  return column.schema.empty() ? *first : *(first + 2);
}

bool is_comparison(const Expr& e) {
  static const char* const kOps[] = {"=", "==", "!=", "<>", "<", "<=", ">", ">=", "IS", "IS NOT"};
  auto same = [&](const char* op) { return e.op == op; };
  return e.kind == ExprKind::Binary && std::any_of(std::begin(kOps), std::end(kOps), same);
}

class Repairer {
 public:
  Repairer(const std::string& sql, const Schema& schema)
      : sql_(sql), select_(parse(sql)), resolution_(select_, &schema), tokens_(tokenize(sql)) {}

  QualifierRepair run() {
    for_each_expr(select_, [&](const Expr& e) {
      if (e.kind == ExprKind::Column && !e.table.empty()) consider(e);
    });
    // "T1.a = T2.a" where only T1 has a would become "T1.a = T1.a": the join is wrong, not the qualifier.
    for_each_expr(select_, [&](const Expr& e) {
      if (!is_comparison(e) || (!owners_.count(e.args[0].get()) && !owners_.count(e.args[1].get()))) return;
      Origin left = origin(*e.args[0]);
      if (left.scope != nullptr && left == origin(*e.args[1])) {
        owners_.erase(e.args[0].get());
        owners_.erase(e.args[1].get());
      }
    });
    return splice();
  }

 private:
  struct Origin {
    const Scope* scope = nullptr;
    int source = -1;
    std::string column;
    bool operator==(const Origin& other) const {
      return scope == other.scope && source == other.source && iequals(column, other.column);
    }
  };

  void consider(const Expr& e) {
    const Binding* binding = resolution_.binding(e);
    if (binding == nullptr || binding->status != BindingStatus::UnknownColumn || binding->source < 0 ||
        binding->outer) {
      return;
    }
    int found = owner(*binding, e.column.text);
    if (found >= 0) owners_[&e] = found;
  }

  // The FROM item a column reads once repaired; no scope when it is not a column bound to one.
  Origin origin(const Expr& e) const {
    if (e.kind != ExprKind::Column) return {};
    const Binding* binding = resolution_.binding(e);
    if (binding == nullptr || binding->source < 0) return {};
    auto repaired = owners_.find(&e);
    if (repaired != owners_.end()) return {binding->scope, repaired->second, e.column.text};
    if (binding->status != BindingStatus::Resolved) return {};
    return {binding->scope, binding->source, e.column.text};
  }

  QualifierRepair splice() const {
    QualifierRepair out;
    for (const auto& [e, found] : owners_) {
      const Token& token = qualifier_token(tokens_, *e);
      const Source& source = resolution_.binding(*e)->scope->sources[found];
      out.repairs.push_back(QualifierFix{e->column.text, sql_.substr(token.start, token.end - token.start),
                                         render_name(Name{source.name, e->table.quote}), token.start, token.end});
    }
    std::sort(out.repairs.begin(), out.repairs.end(),
              [](const QualifierFix& a, const QualifierFix& b) { return a.start < b.start; });
    std::vector<TextEdit> edits;
    for (const QualifierFix& fix : out.repairs) edits.push_back({fix.start, fix.end, fix.replacement});
    out.sql = sql::splice(sql_, edits);
    return out;
  }

  const std::string& sql_;
  Select select_;
  Resolution resolution_;  // points into select_, which therefore never moves
  std::vector<Token> tokens_;
  std::unordered_map<const Expr*, int> owners_;  // repaired column -> index of its new FROM item
};

}  // namespace

QualifierRepair repair_qualifiers(const std::string& sql, const Schema& schema) {
  return Repairer(sql, schema).run();
}

}  // namespace relmem::sql
