#include "relmem/hybrid/hybrid_session.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "relmem/llm/sha256.hpp"
#include "session_core.hpp"
#include "../common/sqlite_statement.hpp"
#include "relmem/catalog/catalog.hpp"
#include "text.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

constexpr int kMaxDomainValues = 5000;

bool is_text_type(const std::string& type) {
  const std::string t = to_lower(type);
  return t.empty() || t.find("char") != std::string::npos || t.find("text") != std::string::npos ||
         t.find("clob") != std::string::npos;
}

int column_index(const BaseTable& table, const std::string& name) {
  for (size_t i = 0; i < table.columns.size(); ++i)
    if (to_lower(table.columns[i]) == to_lower(name)) return static_cast<int>(i);
  return -1;
}

int64_t count(sqlite3* db, const std::string& sql, const std::string& context) {
  SqliteStatement statement(db, sql, context);
  return statement.step() ? statement.integer(0) : 0;
}

BaseTable read_base_table(sqlite3* db, const std::string& requested) {
  const std::string context = "hybrid session: table " + requested;
  BaseTable table;
  {
    SqliteStatement find(db, "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                         context);
    find.bind(1, requested);
    if (!find.step()) throw Error("hybrid schema: the database has no table '" + requested + "'");
    table.name = find.text(0);
  }
  std::vector<int> primary_key;
  {
    SqliteStatement info(db, "SELECT name, type, pk FROM pragma_table_info(?, 'main')", context);
    info.bind(1, table.name);
    while (info.step()) {
      table.columns.push_back(info.text(0));
      table.types.push_back(info.text(1));
      if (info.integer(2) > 0) primary_key.push_back(static_cast<int>(table.columns.size()) - 1);
    }
  }
  table.unique.assign(table.columns.size(), false);
  table.indexed.assign(table.columns.size(), false);
  if (primary_key.size() == 1) {
    table.unique[primary_key[0]] = true;
    table.indexed[primary_key[0]] = to_upper(table.types[primary_key[0]]) == "INTEGER";  // the rowid itself
  }
  {
    SqliteStatement indexes(db,
                            "SELECT ii.name, il.\"unique\", (SELECT COUNT(*) FROM pragma_index_info(il.name, 'main')) "
                            "FROM pragma_index_list(?, 'main') il, pragma_index_info(il.name, 'main') ii WHERE ii.seqno = 0",
                            context);
    indexes.bind(1, table.name);
    while (indexes.step()) {
      const int i = column_index(table, indexes.text(0));
      if (i < 0) continue;
      table.indexed[i] = true;
      if (indexes.integer(1) == 1 && indexes.integer(2) == 1) table.unique[i] = true;
    }
  }
  table.row_count = count(db, "SELECT COUNT(*) FROM main." + quote_identifier(table.name), context);
  table.key_indexes = primary_key;  // replaced by resolve_keys
  return table;
}

int64_t distinct_keys(sqlite3* db, const BaseTable& table, const std::vector<int>& keys) {
  std::string tuple;
  for (int k : keys) tuple += (tuple.empty() ? "" : ", ") + quote_identifier(table.columns[k]);
  return count(db, "SELECT COUNT(*) FROM (SELECT DISTINCT " + tuple + " FROM main." + quote_identifier(table.name) + ")",
               "hybrid session: keys of " + table.name);
}

// The declared key columns that exist, else the primary key plus the two most varied text columns; then columns
// are added (text first, most distinct first) until the keys tell every row apart, as far as the table allows.
std::vector<std::string> resolve_keys(sqlite3* db, BaseTable& table, const std::vector<std::string>& declared,
                                      const std::vector<std::string>& virtual_names) {
  std::vector<int> keys;
  for (const auto& name : declared) {
    const int i = column_index(table, name);
    if (i >= 0 && std::find(keys.begin(), keys.end(), i) == keys.end()) keys.push_back(i);
  }
  std::vector<int> candidates;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    bool is_virtual = false;
    for (const auto& v : virtual_names) is_virtual = is_virtual || to_lower(v) == to_lower(table.columns[i]);
    if (!is_virtual) candidates.push_back(static_cast<int>(i));
  }
  auto distinct_of = [&](int column) { return distinct_keys(db, table, {column}); };
  if (keys.empty()) {
    keys = table.key_indexes;
    std::vector<std::pair<int64_t, int>> texts;
    for (int c : candidates)
      if (is_text_type(table.types[c]) && std::find(keys.begin(), keys.end(), c) == keys.end())
        texts.push_back({distinct_of(c), c});
    std::sort(texts.begin(), texts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < texts.size() && i < 2; ++i) keys.push_back(texts[i].second);
  }
  if (keys.empty() && !candidates.empty()) keys.push_back(candidates[0]);
  int64_t distinct = keys.empty() ? 0 : distinct_keys(db, table, keys);
  while (distinct < table.row_count) {
    // Most rows told apart first; on ties a text column, then one that is not an identifier on its own.
    int best = -1;
    std::tuple<int64_t, bool, bool> best_rank{distinct, false, false};
    for (int c : candidates) {
      if (std::find(keys.begin(), keys.end(), c) != keys.end()) continue;
      auto extended = keys;
      extended.push_back(c);
      const std::tuple<int64_t, bool, bool> rank{distinct_keys(db, table, extended), is_text_type(table.types[c]),
                                                 !table.unique[c]};
      if (std::get<0>(rank) > distinct && (best < 0 || rank > best_rank)) best = c, best_rank = rank;
    }
    const int64_t best_distinct = std::get<0>(best_rank);
    if (best < 0) break;
    keys.push_back(best);
    distinct = best_distinct;
  }
  table.key_indexes = keys;
  std::vector<std::string> names;
  for (int k : keys) names.push_back(table.columns[k]);
  return names;
}

std::vector<std::string> stored_values(sqlite3* db, const std::string& table, const std::string& column) {
  const std::string context = "hybrid session: values of " + table + "." + column;
  SqliteStatement select(db,
                         "SELECT DISTINCT CAST(" + quote_identifier(column) + " AS TEXT) FROM main." +
                             quote_identifier(table) + " WHERE " + quote_identifier(column) +
                             " IS NOT NULL ORDER BY 1 LIMIT " + std::to_string(kMaxDomainValues),
                         context);
  std::vector<std::string> out;
  while (select.step()) out.push_back(select.text(0));
  return out;
}

std::unordered_map<std::string, int64_t> stored_label_ids(sqlite3* db, const std::string& table,
                                                          const std::string& id, const std::string& label) {
  SqliteStatement select(db,
                         "SELECT " + quote_identifier(id) + ", CAST(" + quote_identifier(label) + " AS TEXT) FROM main." +
                             quote_identifier(table) + " WHERE " + quote_identifier(label) + " IS NOT NULL",
                         "hybrid session: labels of " + table);
  std::unordered_map<std::string, int64_t> out;
  while (select.step()) out.emplace(to_lower(select.text(1)), select.integer(0));
  return out;
}

std::string canonical_table_name(sqlite3* db, const std::string& name) { return read_base_table(db, name).name; }

std::string scope_of(const std::string& database, const std::string& table, const std::string& name,
                     const std::string& declaration, const std::vector<std::string>& keys) {
  std::string key_list;
  for (const auto& k : keys) key_list += (key_list.empty() ? "" : ",") + k;
  return "column:" + database + "." + table + "." + name + "#" + sha256_hex(declaration).substr(0, 12) + "|" +
         key_list;
}

}  // namespace

const Values& SessionState::values(const std::string& scope) {
  auto it = cache.find(scope);
  if (it == cache.end()) it = cache.emplace(scope, filler->store()->values(scope)).first;
  return it->second;
}

json HybridStats::to_json() const {
  json kinds = json::object();
  for (const auto& [kind, report] : by_kind) kinds[kind] = report.to_json();
  return {{"rounds", rounds}, {"fills", fills.to_json()}, {"by_kind", kinds}, {"requests", requests}};
}

struct HybridSession::Core {
  SessionState state;
  HybridSchema schema;
  HybridOptions options;

  ~Core() { sqlite3_close_v2(state.db); }

  void prepare_value_tables() {
    for (const auto& v : schema.value_tables) {
      std::string sql = "CREATE TEMP VIEW " + quote_identifier(v.name) + " AS ";
      for (size_t i = 0; i < v.values.size(); ++i)
        sql += std::string(i ? " UNION ALL " : "") + "SELECT " + std::to_string(i + 1) + " AS " +
               quote_identifier(v.id_column) + ", " + quote_string(v.values[i]) + " AS " +
               quote_identifier(v.label_column);
      execute_sql(state.db, sql, "hybrid session: value table " + v.name);
    }
  }

  // Labels a reference column may take, with their ids.
  std::unordered_map<std::string, int64_t> reference_labels(const Reference& reference, std::vector<std::string>& labels) {
    if (const auto* values = schema.value_table(reference.table)) {
      std::unordered_map<std::string, int64_t> ids;
      for (size_t i = 0; i < values->values.size(); ++i) ids.emplace(to_lower(values->values[i]), static_cast<int64_t>(i + 1));
      labels = values->values;
      return ids;
    }
    const std::string table = canonical_table_name(state.db, reference.table);
    labels = stored_values(state.db, table, reference.label_column);
    return stored_label_ids(state.db, table, reference.id_column, reference.label_column);
  }

  std::vector<std::string> domain_values(const ValueDomain& domain) {
    if (!domain.values.empty()) return domain.values;
    if (domain.table.empty()) return {};
    if (const auto* values = schema.value_table(domain.table)) return values->values;
    return stored_values(state.db, canonical_table_name(state.db, domain.table), domain.column);
  }

  void prepare_tables() {
    for (size_t t = 0; t < schema.tables.size(); ++t) {
      auto& declaration = schema.tables[t];
      TableState table;
      table.base = read_base_table(state.db, declaration.table);
      declaration.table = table.base.name;
      std::vector<std::string> names;
      for (const auto& c : declaration.columns) {
        if (column_index(table.base, c.name) >= 0)
          throw Error("hybrid schema: " + table.base.name + " already has a column '" + c.name + "'");
        names.push_back(c.name);
      }
      declaration.key_columns = resolve_keys(state.db, table.base, declaration.key_columns, names);
      table.declaration = declaration;
      for (const auto& c : declaration.columns) {
        ColumnState column;
        column.declaration = c;
        column.spec = {c.name, c.reference ? FillType::Text : c.type, false, c.meaning, {}, ""};
        if (c.reference) {
          column.label_ids = reference_labels(*c.reference, column.spec.allowed);
          column.spec.allowed_from = c.reference->table + "." + c.reference->label_column;
        } else {
          column.spec.allowed = domain_values(c.domain);
          if (!c.domain.table.empty()) column.spec.allowed_from = c.domain.table + "." + c.domain.column;
        }
        const json identity = {fill_type_name(column.spec.type), c.meaning, column.spec.allowed_from,
                               c.domain.values};
        column.scope = scope_of(state.database, table.base.name, c.name, identity.dump(), declaration.key_columns);
        table.columns.push_back(std::move(column));
      }
      state.tables.push_back(std::move(table));
      execute_sql(state.db,
                  "CREATE VIRTUAL TABLE temp." + quote_identifier(declaration.table) + " USING relmem_table(" +
                      std::to_string(t) + ")",
                  "hybrid session: virtual table " + declaration.table);
    }
  }

  void prepare_relations() {
    for (size_t r = 0; r < schema.relations.size(); ++r) {
      auto& declaration = schema.relations[r];
      RelationState relation;
      relation.owner = read_base_table(state.db, declaration.owner_table);
      declaration.owner_table = relation.owner.name;
      relation.owner_id_index = column_index(relation.owner, declaration.owner_id_column);
      if (relation.owner_id_index < 0)
        throw Error("hybrid schema: relation " + declaration.name + ": " + relation.owner.name + " has no column '" +
                    declaration.owner_id_column + "'");
      declaration.key_columns = resolve_keys(state.db, relation.owner, declaration.key_columns, {});
      const Reference target{declaration.target_table, declaration.target_id_column, declaration.target_label_column};
      relation.spec = {declaration.target_label_column, FillType::Text, true, declaration.meaning, {},
                       declaration.target_table + "." + declaration.target_label_column};
      relation.label_ids = reference_labels(target, relation.spec.allowed);
      relation.declaration = declaration;
      const json identity = {declaration.meaning, relation.spec.allowed_from};
      relation.scope = "relation:" + state.database + "." + declaration.name + "#" +
                       sha256_hex(identity.dump()).substr(0, 12) + "|" + [&] {
                         std::string keys;
                         for (const auto& k : declaration.key_columns) keys += (keys.empty() ? "" : ",") + k;
                         return keys;
                       }();
      state.relations.push_back(std::move(relation));
      execute_sql(state.db,
                  "CREATE VIRTUAL TABLE temp." + quote_identifier(declaration.name) + " USING relmem_relation(" +
                      std::to_string(r) + ")",
                  "hybrid session: relation " + declaration.name);
    }
  }

  // Every row of a table as (key, shown).
  std::map<std::string, json> all_rows(const BaseTable& base) {
    std::string sql = "SELECT rowid";
    for (const auto& column : base.columns) sql += ", " + quote_identifier(column);
    SqliteStatement select(state.db, sql + " FROM main." + quote_identifier(base.name), "hybrid session: " + base.name);
    std::map<std::string, json> out;
    while (select.step()) {
      json shown = row_key_object(base, select.handle(), 1);
      out.emplace(item_key(shown), std::move(shown));
    }
    return out;
  }

  void fill_rows(HybridStats& stats, int t, const std::map<std::string, Missing::Row>& rows) {
    std::map<std::set<int>, std::map<std::string, json>> by_columns;  // rows missing the same columns together
    for (const auto& [key, row] : rows) by_columns[row.columns].emplace(key, row.shown);
    for (const auto& [columns, group] : by_columns) fill_table_columns(stats, t, columns, group);
  }

  // Whole (HQDL): every row of the table, for every virtual column it lacks (its key is sent once). Lazy: the rows
  // the query reached, for every virtual column of the table the query reads that the row lacks, so a row's key is
  // sent once per query instead of once per column, and a column no question reads is never asked for.
  std::map<std::string, Missing::Row> rows_to_fill(int t, const std::map<std::string, Missing::Row>& reached,
                                                   bool whole, const std::set<int>& read = {}) {
    if (!whole) {
      std::map<std::string, Missing::Row> out = reached;
      for (auto& [key, row] : out) add_unfilled(t, key, read, row);
      return out;
    }
    std::set<int> every_column;
    for (size_t c = 0; c < state.tables[t].columns.size(); ++c) every_column.insert(static_cast<int>(c));
    std::map<std::string, Missing::Row> out;
    for (auto& [key, shown] : all_rows(state.tables[t].base)) {
      Missing::Row row{shown, {}};
      add_unfilled(t, key, every_column, row);
      if (!row.columns.empty()) out.emplace(key, std::move(row));
    }
    return out;
  }

  // Adds to row.columns each of `columns` (virtual columns of table t) that holds no value for the row `key` yet.
  void add_unfilled(int t, const std::string& key, const std::set<int>& columns, Missing::Row& row) {
    for (int c : columns)
      if (!state.values(state.tables[t].columns[c].scope).count(key)) row.columns.insert(c);
  }

  std::map<std::string, json> unfilled_rows(const BaseTable& base, const std::string& scope) {
    const auto& known = state.values(scope);
    std::map<std::string, json> out;
    for (auto& [key, shown] : all_rows(base))
      if (!known.count(key)) out.emplace(key, std::move(shown));
    return out;
  }

  void record(HybridStats& stats, const FillTask& task, const std::string& target, const FillReport& report) {
    stats.fills.add(report);
    stats.by_kind[task.kind].add(report);
    json columns = json::array();
    for (const auto& a : task.answers) columns.push_back(a.name);
    stats.requests.push_back({{"kind", task.kind}, {"target", target}, {"answers", columns},
                              {"items", report.items}, {"requests", report.requests},
                              {"prompt_tokens", report.prompt_tokens},
                              {"completion_tokens", report.completion_tokens}, {"nulls", report.nulls}});
  }

  void run_fill(HybridStats& stats, const FillTask& task, const std::string& target, const std::map<std::string, json>& rows) {
    if (rows.empty()) return;
    std::vector<FillItem> items;
    for (const auto& [key, shown] : rows) items.push_back({key, shown});
    auto outcome = state.filler->fill(task, items);
    for (size_t a = 0; a < task.scopes.size(); ++a) {
      auto& cache = state.cache[task.scopes[a]];
      for (auto& [key, value] : outcome.values[a]) cache[key] = std::move(value);
    }
    record(stats, task, target, outcome.report);
  }

  FillTask new_task(const std::string& kind, const std::string& stage) const {
    FillTask task;
    task.kind = kind;
    task.stage = stage;
    task.database = state.database;
    return task;
  }

  void fill_table_columns(HybridStats& stats, size_t t, const std::set<int>& columns, const std::map<std::string, json>& rows) {
    const auto& table = state.tables[t];
    FillTask task = new_task("fill", "hybrid_fill");
    task.table = table.base.name;
    task.key_columns = table.declaration.key_columns;
    for (int c : columns) {
      task.answers.push_back(table.columns[c].spec);
      task.scopes.push_back(table.columns[c].scope);
    }
    run_fill(stats, task, table.base.name, rows);
  }

  void fill_relation(HybridStats& stats, size_t r, const std::map<std::string, json>& rows) {
    const auto& relation = state.relations[r];
    FillTask task = new_task("list", "hybrid_fill");
    task.table = relation.owner.name;
    task.relation = relation.declaration.name;
    task.instruction = relation.declaration.meaning;
    task.key_columns = relation.declaration.key_columns;
    task.answers = {relation.spec};
    task.scopes = {relation.scope};
    run_fill(stats, task, relation.declaration.name, rows);
  }

  AnswerSpec function_answer(const FunctionState& function) {
    AnswerSpec spec{"answer", function.kind == "match" ? FillType::Text : FillType::Any, false, "", {}, ""};
    if (function.domain.empty()) return spec;
    const auto column = parse_column_reference(function.domain);
    if (column && function.domain.find(';') == std::string::npos) {
      spec.allowed = domain_values(ValueDomain{column->first, column->second, {}});
      spec.allowed_from = column->first + "." + column->second;
    } else {
      std::string part;
      for (char c : function.domain + ";") {
        if (c == ';') {
          size_t b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
          if (b != std::string::npos) spec.allowed.push_back(part.substr(b, e - b + 1));
          part.clear();
        } else {
          part += c;
        }
      }
    }
    return spec;
  }

  void fill_function(HybridStats& stats, const FunctionState& function, const std::map<std::string, json>& items) {
    FillTask task = new_task(function.kind, "hybrid_" + function.kind);
    task.instruction = function.instruction;
    task.answers = {function_answer(function)};
    task.scopes = {function.scope};
    run_fill(stats, task, function.instruction, items);
  }

  // The virtual columns of each extended table that `sql` reads anywhere (select list, predicates, joins, sorts),
  // as SQLite's authorizer reports the column reads when it compiles the statement. Called only after the query
  // ran under execute_readonly's checks; the statement is compiled here, never stepped.
  std::map<int, std::set<int>> read_virtual_columns(const std::string& sql) {
    struct Reads {
      const std::vector<TableState>* tables;
      std::map<int, std::set<int>> out;
    } reads{&state.tables, {}};
    auto collect = [](void* data, int action, const char* table, const char* column, const char*, const char*) {
      auto* r = static_cast<Reads*>(data);
      if (action != SQLITE_READ || !table || !column) return SQLITE_OK;
      for (size_t t = 0; t < r->tables->size(); ++t) {
        const auto& state = (*r->tables)[t];
        if (to_lower(state.base.name) != to_lower(table)) continue;
        for (size_t c = 0; c < state.columns.size(); ++c)
          if (to_lower(state.columns[c].declaration.name) == to_lower(column))
            r->out[static_cast<int>(t)].insert(static_cast<int>(c));
      }
      return SQLITE_OK;
    };
    sqlite3_set_authorizer(state.db, collect, &reads);
    sqlite3_stmt* statement = nullptr;
    sqlite3_prepare_v2(state.db, sql.c_str(), static_cast<int>(sql.size()), &statement, nullptr);
    sqlite3_finalize(statement);
    sqlite3_set_authorizer(state.db, nullptr, nullptr);
    return reads.out;
  }

  void fill_missing(HybridStats& stats, const std::map<int, std::set<int>>& read) {
    Missing missing = std::move(state.missing);
    state.missing = Missing{};
    for (const auto& [t, rows] : missing.table_rows) {
      const auto found = read.find(t);
      fill_rows(stats, t, rows_to_fill(t, rows, options.mode == FillMode::Whole,
                                       found == read.end() ? std::set<int>{} : found->second));
    }
    for (const auto& [r, rows] : missing.relation_rows) {
      const auto& relation = state.relations[r];
      fill_relation(stats, r, options.mode == FillMode::Whole ? unfilled_rows(relation.owner, relation.scope) : rows);
    }
    for (const auto& [scope, items] : missing.function_items) fill_function(stats, state.functions.at(scope), items);
  }
};

HybridSession::HybridSession(std::string database, const std::string& db_path, HybridSchema schema,
                             std::shared_ptr<Filler> filler, HybridOptions options)
    : core_(std::make_unique<Core>()) {
  if (!filler) throw Error("HybridSession needs a filler");
  std::string error;
  core_->state.db = open_readonly(db_path, &error);
  if (!core_->state.db) throw Error("hybrid session: " + error);
  core_->state.database = std::move(database);
  core_->state.filler = std::move(filler);
  core_->schema = std::move(schema);
  core_->options = options;
  register_hybrid_modules(&core_->state);
  register_llm_functions(&core_->state);
  core_->prepare_value_tables();
  core_->prepare_tables();
  core_->prepare_relations();
}

HybridSession::~HybridSession() = default;

HybridResult HybridSession::execute(const std::string& sql) {
  HybridResult out;
  auto& state = core_->state;
  state.missing = Missing{};
  std::map<int, std::set<int>> read;  // virtual columns the query reads, per table
  for (int round = 1; round <= core_->options.max_rounds; ++round) {
    out.stats.rounds = round;
    out.result = execute_readonly_on(state.db, sql, core_->options.exec);
    if (!out.result.ok() || state.missing.empty()) return out;
    if (round == 1) read = core_->read_virtual_columns(sql);
    core_->fill_missing(out.stats, read);
  }
  state.missing = Missing{};
  out.result.error = SqlError{SqlErrorKind::Runtime, "hybrid query still reached unfilled values after " +
                                                         std::to_string(core_->options.max_rounds) + " rounds"};
  return out;
}

FillReport HybridSession::fill_all() {
  HybridStats stats;
  auto& state = core_->state;
  for (size_t t = 0; t < state.tables.size(); ++t)
    core_->fill_rows(stats, static_cast<int>(t), core_->rows_to_fill(static_cast<int>(t), {}, true));
  for (size_t r = 0; r < state.relations.size(); ++r)
    core_->fill_relation(stats, r, core_->unfilled_rows(state.relations[r].owner, state.relations[r].scope));
  return stats.fills;
}

FillReport HybridSession::prefill(const std::string& target, const std::vector<nlohmann::json>& keys,
                                  const std::vector<std::string>& columns) {
  HybridStats stats;
  auto& state = core_->state;
  auto rows_of = [&](const std::vector<std::string>& key_columns) {
    std::map<std::string, nlohmann::json> rows;
    for (const auto& key : keys) {
      nlohmann::json shown = nlohmann::json::object();
      for (const auto& column : key_columns) {
        if (!key.is_object() || !key.contains(column))
          throw Error("hybrid prefill: a row of " + target + " lacks its key column '" + column + "'");
        shown[column] = key.at(column);
      }
      rows.emplace(item_key(shown), std::move(shown));
    }
    return rows;
  };
  for (size_t r = 0; r < state.relations.size(); ++r) {
    if (to_lower(state.relations[r].declaration.name) != to_lower(target)) continue;
    const auto& known = state.values(state.relations[r].scope);
    auto rows = rows_of(state.relations[r].declaration.key_columns);
    for (auto it = rows.begin(); it != rows.end();) it = known.count(it->first) ? rows.erase(it) : std::next(it);
    core_->fill_relation(stats, r, rows);
    return stats.fills;
  }
  for (size_t t = 0; t < state.tables.size(); ++t) {
    const auto& table = state.tables[t];
    if (to_lower(table.base.name) != to_lower(target)) continue;
    std::set<int> wanted;
    for (const auto& name : columns) {
      size_t c = 0;
      while (c < table.columns.size() && to_lower(table.columns[c].declaration.name) != to_lower(name)) ++c;
      if (c == table.columns.size()) throw Error("hybrid prefill: " + target + " has no virtual column '" + name + "'");
      wanted.insert(static_cast<int>(c));
    }
    std::map<std::string, Missing::Row> rows;
    for (auto& [key, shown] : rows_of(table.declaration.key_columns)) {
      Missing::Row row{shown, {}};
      core_->add_unfilled(static_cast<int>(t), key, wanted, row);
      if (!row.columns.empty()) rows.emplace(key, std::move(row));
    }
    core_->fill_rows(stats, static_cast<int>(t), rows);
    return stats.fills;
  }
  throw Error("hybrid prefill: no virtual table or relation '" + target + "'");
}

const HybridSchema& HybridSession::schema() const { return core_->schema; }
const std::string& HybridSession::database() const { return core_->state.database; }
HybridOptions& HybridSession::options() { return core_->options; }

}  // namespace relmem::hybrid
