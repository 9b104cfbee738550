#include "relmem/sql/resolve.hpp"

#include "relmem/sql/render.hpp"
#include "words.hpp"

namespace relmem::sql {
namespace {

struct CteInfo {
  const Cte* cte = nullptr;
  std::vector<DerivedColumn> columns;
  bool complete = true;
};
using CteEnvironment = std::vector<CteInfo>;  // innermost last

struct Outputs {
  std::vector<DerivedColumn> columns;
  bool complete = true;
};

bool is_rowid(const std::string& name) {
  return iequals(name, "rowid") || iequals(name, "oid") || iequals(name, "_rowid_");
}

const DerivedColumn* find_derived(const Source& source, const std::string& name) {
  for (const DerivedColumn& column : source.columns) {
    if (iequals(column.name, name)) return &column;
  }
  return nullptr;
}

bool source_has_column(const Source& source, const std::string& name) {
  if (source.kind == SourceKind::BaseTable) return source.table->column(name) != nullptr;
  return find_derived(source, name) != nullptr;
}

bool contains_name(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& candidate : names) {
    if (iequals(candidate, name)) return true;
  }
  return false;
}

// SQLite names a result column by its alias, a plain column by the column's name, anything else by its text.
std::string output_name(const ResultColumn& column) {
  if (!column.alias.empty()) return column.alias.text;
  if (column.expr->kind == ExprKind::Column) return column.expr->column.text;
  return render(*column.expr);
}

// A subquery's or CTE's outputs renamed by an explicit column list: WITH c(a, b) AS (...).
void rename(Outputs& outputs, const std::vector<Name>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (i < outputs.columns.size()) {
      outputs.columns[i].name = names[i].text;
    } else {
      outputs.columns.push_back(DerivedColumn{names[i].text, nullptr, nullptr});
    }
  }
}

}  // namespace

class Resolver {
 public:
  explicit Resolver(Resolution& out) : out_(out) {}

  Outputs select(const Select& select, const Scope* outer, CteEnvironment env) {
    for (const Cte& cte : select.ctes) env.push_back(cte_info(cte, select.recursive, outer, env));
    for (const SelectCore& core : select.cores) this->core(core, outer, env);
    const Scope& first = *out_.scope_of_core_.at(&select.cores.front());
    Outputs outputs = this->outputs(select.cores.front(), first);
    bool compound = select.cores.size() > 1;
    for (const OrderTerm& term : select.order_by) order_term(*term.expr, first, compound, outputs, env);
    if (select.limit) expr(*select.limit, first, env, false);
    if (select.offset) expr(*select.offset, first, env, false);
    return outputs;
  }

 private:
  CteInfo cte_info(const Cte& cte, bool recursive, const Scope* outer, CteEnvironment env) {
    if (recursive) {
      // The recursive part reads the CTE itself; its columns are named by the anchor (the first SELECT).
      Outputs anchor = syntactic_outputs(cte.select->cores.front());
      rename(anchor, cte.columns);
      env.push_back(CteInfo{&cte, anchor.columns, anchor.complete || !cte.columns.empty()});
    }
    Outputs outputs = select(*cte.select, outer, env);
    rename(outputs, cte.columns);
    return CteInfo{&cte, std::move(outputs.columns), outputs.complete};
  }

  static Outputs syntactic_outputs(const SelectCore& core) {
    Outputs outputs;
    for (const ResultColumn& column : core.columns) {
      const Expr& e = *column.expr;
      if (e.kind == ExprKind::Star) {
        outputs.complete = false;
      } else {
        outputs.columns.push_back(DerivedColumn{output_name(column), nullptr, nullptr});
      }
    }
    return outputs;
  }

  void core(const SelectCore& core, const Scope* outer, const CteEnvironment& env) {
    auto owned = std::make_unique<Scope>();
    Scope& scope = *owned;
    scope.core = &core;
    scope.parent = outer;
    add_sources(core.from, scope, outer, env);
    out_.scopes_.push_back(std::move(owned));
    out_.scope_of_core_[&core] = &scope;

    for (const ResultColumn& column : core.columns) expr(*column.expr, scope, env, false);
    join_conditions(core.from, scope, env);
    if (core.where) expr(*core.where, scope, env, true);
    for (const ExprPtr& term : core.group_by) expr(*term, scope, env, true);
    if (core.having) expr(*core.having, scope, env, true);
    for (const OrderTerm& term : core.misplaced_order_by) expr(*term.expr, scope, env, true);
    if (core.misplaced_limit) expr(*core.misplaced_limit, scope, env, false);
    if (core.misplaced_offset) expr(*core.misplaced_offset, scope, env, false);
  }

  void join_conditions(const std::vector<TableRef>& items, const Scope& scope, const CteEnvironment& env) {
    for (const TableRef& item : items) {
      join_conditions(item.group, scope, env);
      if (item.on) expr(*item.on, scope, env, false);
    }
  }

  void add_sources(const std::vector<TableRef>& items, Scope& scope, const Scope* outer, const CteEnvironment& env) {
    for (const TableRef& item : items) {
      for (const Name& column : item.using_columns) scope.using_columns.push_back(column.text);
      if (item.join.find("NATURAL") != std::string::npos) scope.has_natural_join = true;
      if (!item.group.empty()) {
        add_sources(item.group, scope, outer, env);
        continue;
      }
      Source source;
      source.ref = &item;
      if (item.subquery) {
        // A FROM subquery cannot see its sibling FROM items, only the enclosing queries.
        Outputs outputs = select(*item.subquery, outer, env);
        source.kind = SourceKind::Subquery;
        source.name = item.alias.text;
        source.columns = std::move(outputs.columns);
        source.columns_known = outputs.complete;
      } else if (const CteInfo* cte = item.schema.empty() ? find_cte(env, item.name.text) : nullptr) {
        source.kind = SourceKind::Cte;
        source.name = item.alias.empty() ? item.name.text : item.alias.text;
        source.columns = cte->columns;
        source.columns_known = cte->complete;
      } else {
        source.kind = SourceKind::BaseTable;
        source.name = item.alias.empty() ? item.name.text : item.alias.text;
        source.table = out_.schema_ ? out_.schema_->table(item.name.text) : nullptr;
        source.columns_known = source.table != nullptr;
      }
      scope.sources.push_back(std::move(source));
    }
  }

  static const CteInfo* find_cte(const CteEnvironment& env, const std::string& name) {
    for (auto it = env.rbegin(); it != env.rend(); ++it) {
      if (iequals(it->cte->name.text, name)) return &*it;
    }
    return nullptr;
  }

  Outputs outputs(const SelectCore& core, const Scope& scope) {
    Outputs outputs;
    for (const ResultColumn& column : core.columns) {
      const Expr& e = *column.expr;
      if (e.kind == ExprKind::Star) {
        for (const Source& source : scope.sources) {
          if (!e.table.empty() && !iequals(source.name, e.table.text)) continue;
          append_columns(source, outputs);
        }
        continue;
      }
      DerivedColumn derived;
      derived.name = output_name(column);
      if (const Binding* binding = out_.binding(e); binding && binding->status == BindingStatus::Resolved) {
        derived.table = binding->table;
        derived.column = binding->column;
      }
      outputs.columns.push_back(std::move(derived));
    }
    return outputs;
  }

  static void append_columns(const Source& source, Outputs& outputs) {
    if (!source.columns_known) outputs.complete = false;
    if (source.kind != SourceKind::BaseTable) {
      outputs.columns.insert(outputs.columns.end(), source.columns.begin(), source.columns.end());
    } else if (source.table) {
      for (const Column& column : source.table->columns) {
        outputs.columns.push_back(DerivedColumn{column.name, source.table, &column});
      }
    }
  }

  // ORDER BY reads a bare name as a result column first: by alias, and in a compound by output name.
  void order_term(const Expr& e, const Scope& first, bool compound, const Outputs& outputs,
                  const CteEnvironment& env) {
    if (e.kind == ExprKind::Column && e.table.empty()) {
      for (const ResultColumn& column : first.core->columns) {
        if (!column.alias.empty() && iequals(column.alias.text, e.column.text)) {
          out_.bindings_[&e] = alias_binding(first, e.column.text);
          return;
        }
      }
      if (compound && find_output(outputs, e.column.text)) {
        out_.bindings_[&e] = alias_binding(first, e.column.text);
        return;
      }
    }
    expr(e, first, env, true);
  }

  static bool find_output(const Outputs& outputs, const std::string& name) {
    for (const DerivedColumn& column : outputs.columns) {
      if (iequals(column.name, name)) return true;
    }
    return false;
  }

  static Binding alias_binding(const Scope& scope, const std::string& name) {
    Binding binding;
    binding.status = BindingStatus::ResultAlias;
    binding.scope = &scope;
    binding.column_name = name;
    return binding;
  }

  void expr(const Expr& e, const Scope& scope, const CteEnvironment& env, bool aliases) {
    if (e.kind == ExprKind::Column) {
      out_.bindings_[&e] = bind(e.table, e.column.text, scope, aliases);
    } else if (e.kind == ExprKind::Star && !e.table.empty()) {
      out_.bindings_[&e] = bind(e.table, "*", scope, false);
    } else if (e.kind == ExprKind::Literal && e.literal_kind == LiteralKind::String && e.quote == '"') {
      // SQLite reads "x" as a column when one is in scope, and as the string 'x' otherwise.
      Binding binding = bind(Name{}, e.value, scope, false);
      if (binding.status == BindingStatus::Resolved) out_.bindings_[&e] = std::move(binding);
    }
    for (const ExprPtr& arg : e.args) expr(*arg, scope, env, aliases);
    if (e.select) select(*e.select, &scope, env);
  }

  Binding bind(const Name& qualifier, const std::string& column, const Scope& scope, bool aliases) {
    if (!qualifier.empty()) {
      for (const Scope* s = &scope; s != nullptr; s = s->parent) {
        for (size_t i = 0; i < s->sources.size(); ++i) {
          if (iequals(s->sources[i].name, qualifier.text)) return bind_in_source(*s, i, column, s != &scope);
        }
      }
      Binding binding;
      binding.status = BindingStatus::UnknownQualifier;
      binding.scope = &scope;
      binding.table_name = qualifier.text;
      binding.column_name = column;
      return binding;
    }
    for (const Scope* s = &scope; s != nullptr; s = s->parent) {
      std::vector<int> matches;
      std::vector<int> unknown;
      for (size_t i = 0; i < s->sources.size(); ++i) {
        const Source& source = s->sources[i];
        if (!source.columns_known) {
          unknown.push_back(static_cast<int>(i));
        } else if (source_has_column(source, column)) {
          matches.push_back(static_cast<int>(i));
        }
      }
      bool outer = s != &scope;
      if (matches.size() > 1 && !s->has_natural_join && !contains_name(s->using_columns, column)) {
        Binding binding;
        binding.status = BindingStatus::Ambiguous;
        binding.scope = s;
        binding.outer = outer;
        binding.candidates = matches;
        binding.column_name = column;
        return binding;
      }
      if (!matches.empty()) return bind_in_source(*s, matches.front(), column, outer);
      if (!unknown.empty()) {
        if (unknown.size() == 1) return bind_in_source(*s, unknown.front(), column, outer);
        Binding binding;
        binding.status = BindingStatus::Unverifiable;
        binding.scope = s;
        binding.outer = outer;
        binding.candidates = unknown;
        binding.column_name = column;
        return binding;
      }
      if (aliases && !outer) {
        for (const ResultColumn& result : s->core->columns) {
          if (!result.alias.empty() && iequals(result.alias.text, column)) return alias_binding(*s, column);
        }
      }
      if (is_rowid(column) && s->sources.size() == 1) return bind_in_source(*s, 0, column, outer);
    }
    Binding binding;
    binding.status = BindingStatus::UnknownColumn;
    binding.scope = &scope;
    binding.column_name = column;
    return binding;
  }

  static Binding bind_in_source(const Scope& scope, size_t index, const std::string& column, bool outer) {
    const Source& source = scope.sources[index];
    Binding binding;
    binding.scope = &scope;
    binding.source = static_cast<int>(index);
    binding.outer = outer;
    if (source.kind == SourceKind::BaseTable) binding.table_name = source.table ? source.table->name : source.ref->name.text;
    binding.column_name = column;
    if (column == "*") {
      binding.status = BindingStatus::Resolved;
    } else if (!source.columns_known) {
      binding.status = BindingStatus::Unverifiable;
    } else if (source.kind == SourceKind::BaseTable) {
      binding.table = source.table;
      binding.column = source.table->column(column);
      binding.status = binding.column || is_rowid(column) ? BindingStatus::Resolved : BindingStatus::UnknownColumn;
      if (binding.column) binding.column_name = binding.column->name;
    } else if (const DerivedColumn* derived = find_derived(source, column)) {
      binding.status = BindingStatus::Resolved;
      binding.table = derived->table;
      binding.column = derived->column;
      if (derived->table) binding.table_name = derived->table->name;
      if (derived->column) binding.column_name = derived->column->name;
    } else {
      binding.status = is_rowid(column) ? BindingStatus::Resolved : BindingStatus::UnknownColumn;
    }
    return binding;
  }

  Resolution& out_;
};

Resolution::Resolution(const Select& select, const Schema* schema) : schema_(schema) {
  Resolver(*this).select(select, nullptr, {});
}

const Binding* Resolution::binding(const Expr& expr) const {
  auto it = bindings_.find(&expr);
  return it == bindings_.end() ? nullptr : &it->second;
}

const Scope* Resolution::scope(const SelectCore& core) const {
  auto it = scope_of_core_.find(&core);
  return it == scope_of_core_.end() ? nullptr : it->second;
}

}  // namespace relmem::sql
