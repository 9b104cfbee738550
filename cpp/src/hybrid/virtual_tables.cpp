// The SQLite virtual-table modules that join filled values into queries. relmem_table(i) exposes table i's stored
// columns followed by its virtual columns; relmem_relation(i) exposes relation i as (owner column, target column).
// Constraints on stored columns are pushed into the scan of the stored table, so rows the query's ordinary
// predicates reject are never looked up, and a row's virtual value is looked up only when SQLite reads it.
#include <cstring>
#include <functional>
#include <unordered_map>

#include "session_core.hpp"
#include "../common/sqlite_statement.hpp"
#include "relmem/catalog/catalog.hpp"
#include "text.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

struct HybridVtab {
  sqlite3_vtab base{};
  SessionState* state = nullptr;
  int index = 0;
};

struct HybridCursor {
  sqlite3_vtab_cursor base{};
  std::unordered_map<std::string, sqlite3_stmt*> statements;  // by constraint text, reused across xFilter calls
  sqlite3_stmt* scan = nullptr;
  bool eof = true;
  int64_t row_number = 0;
  std::string key;  // of the current row, computed when first needed
  json shown;
  int64_t key_row = -1;
  std::vector<int64_t> targets;  // relations: target ids of the current owner row
  size_t target = 0;

  ~HybridCursor() {
    for (auto& [_, statement] : statements) sqlite3_finalize(statement);
  }
};

HybridVtab* vtab_of(sqlite3_vtab_cursor* cursor) { return reinterpret_cast<HybridVtab*>(cursor->pVtab); }
HybridCursor* cursor_of(sqlite3_vtab_cursor* cursor) { return reinterpret_cast<HybridCursor*>(cursor); }

int fail(sqlite3_vtab* vtab, const std::string& message) {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("%s", message.c_str());
  return SQLITE_ERROR;
}

std::string declared_type(const VirtualColumn& column) {
  return column.reference ? "INTEGER" : fill_type_name(column.type);
}

int connect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** error,
            bool relation) {
  auto* state = static_cast<SessionState*>(aux);
  const int index = argc > 3 ? std::atoi(argv[3]) : -1;
  const int count = relation ? static_cast<int>(state->relations.size()) : static_cast<int>(state->tables.size());
  if (index < 0 || index >= count) {
    *error = sqlite3_mprintf("relmem hybrid module: no declaration %d", index);
    return SQLITE_ERROR;
  }
  std::string ddl = "CREATE TABLE x(";
  if (relation) {
    const auto& r = state->relations[index].declaration;
    ddl += quote_identifier(r.owner_column) + " INTEGER, " + quote_identifier(r.target_column) + " INTEGER";
  } else {
    const auto& t = state->tables[index];
    for (size_t i = 0; i < t.base.columns.size(); ++i)
      ddl += (i ? ", " : "") + quote_identifier(t.base.columns[i]) + " " + t.base.types[i];
    for (const auto& c : t.columns) ddl += ", " + quote_identifier(c.declaration.name) + " " + declared_type(c.declaration);
  }
  ddl += ")";
  if (const int rc = sqlite3_declare_vtab(db, ddl.c_str()); rc != SQLITE_OK) {
    *error = sqlite3_mprintf("relmem hybrid module: %s", sqlite3_errmsg(db));
    return rc;
  }
  auto* vtab = new HybridVtab();
  vtab->state = state;
  vtab->index = index;
  *out = &vtab->base;
  return SQLITE_OK;
}

int table_connect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** error) {
  return connect(db, aux, argc, argv, out, error, false);
}
int relation_connect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** error) {
  return connect(db, aux, argc, argv, out, error, true);
}

int disconnect(sqlite3_vtab* vtab) {
  delete reinterpret_cast<HybridVtab*>(vtab);
  return SQLITE_OK;
}

const char* pushed_operator(unsigned char op) {
  switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: return "=";
    case SQLITE_INDEX_CONSTRAINT_GT: return ">";
    case SQLITE_INDEX_CONSTRAINT_GE: return ">=";
    case SQLITE_INDEX_CONSTRAINT_LT: return "<";
    case SQLITE_INDEX_CONSTRAINT_LE: return "<=";
    case SQLITE_INDEX_CONSTRAINT_NE: return "<>";
    case SQLITE_INDEX_CONSTRAINT_IS: return "IS";
    case SQLITE_INDEX_CONSTRAINT_LIKE: return "LIKE";
    case SQLITE_INDEX_CONSTRAINT_GLOB: return "GLOB";
    default: return nullptr;
  }
}

// SQLite's estimate for a table without statistics; the stored tables are costed on the same scale, so a join of
// virtual and stored tables is planned as SQLite plans the stored tables alone.
constexpr double kAssumedRows = 1048576.0;
constexpr double kRowsPerIndexKey = 10.0;  // SQLite's default rows per key of a non-unique index

// Pushes constraints on stored columns into the stored table's scan (SQLite still checks them: omit stays 0).
// `column_of` maps a vtab column to the stored column it filters, or -1. The cost follows the stored table's
// indexes: a constraint no index serves still filters the scan but cannot shorten it, so SQLite keeps such a scan
// out of the inner loop of a join (virtual tables get no automatic indexes).
int plan_scan(const BaseTable& base, sqlite3_index_info* info, double rows_per_key,
              const std::function<int(int)>& column_of) {
  std::string where;
  double filtered = 1.0;  // share of rows constraints without an index let through
  bool unique = false, indexed_equal = false, indexed_range = false;
  int argument = 0;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& constraint = info->aConstraint[i];
    const int column = constraint.iColumn >= 0 ? column_of(constraint.iColumn) : -1;
    const char* op = pushed_operator(constraint.op);
    if (!constraint.usable || column < 0 || !op) continue;
    info->aConstraintUsage[i].argvIndex = ++argument;
    info->aConstraintUsage[i].omit = 0;
    where += std::string(where.empty() ? "" : " AND ") + quote_identifier(base.columns[column]) + " " + op + " ?" +
             std::to_string(argument);
    const bool equal = constraint.op == SQLITE_INDEX_CONSTRAINT_EQ || constraint.op == SQLITE_INDEX_CONSTRAINT_IS;
    if (base.indexed[column] && equal) {
      unique = unique || base.unique[column];
      indexed_equal = true;
    } else if (base.indexed[column] && constraint.op != SQLITE_INDEX_CONSTRAINT_NE) {
      indexed_range = true;
    } else {
      filtered *= equal ? 0.25 : constraint.op == SQLITE_INDEX_CONSTRAINT_NE ? 0.9 : 0.5;
    }
  }
  double scanned = kAssumedRows * rows_per_key;
  if (unique) scanned = rows_per_key;
  else if (indexed_equal) scanned = kRowsPerIndexKey * rows_per_key;
  else if (indexed_range) scanned /= 4.0;
  info->estimatedRows = static_cast<sqlite3_int64>(std::max(scanned * filtered, 1.0));
  info->estimatedCost = scanned + (argument ? 10.0 : 0.0);
  if (unique && rows_per_key <= 1.0) info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  info->idxStr = sqlite3_mprintf("%s", where.c_str());
  info->needToFreeIdxStr = 1;
  return SQLITE_OK;
}

int table_best_index(sqlite3_vtab* vtab, sqlite3_index_info* info) {
  const auto& table = reinterpret_cast<HybridVtab*>(vtab)->state->tables[reinterpret_cast<HybridVtab*>(vtab)->index];
  const int stored = static_cast<int>(table.base.columns.size());
  return plan_scan(table.base, info, 1.0, [stored](int column) { return column < stored ? column : -1; });
}

int relation_best_index(sqlite3_vtab* vtab, sqlite3_index_info* info) {
  const auto& relation =
      reinterpret_cast<HybridVtab*>(vtab)->state->relations[reinterpret_cast<HybridVtab*>(vtab)->index];
  const int owner_id = relation.owner_id_index;
  return plan_scan(relation.owner, info, 5.0, [owner_id](int column) { return column == 0 ? owner_id : -1; });
}

int open_cursor(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = &(new HybridCursor())->base;
  return SQLITE_OK;
}

int close_cursor(sqlite3_vtab_cursor* cursor) {
  delete cursor_of(cursor);
  return SQLITE_OK;
}

std::string scan_sql(const BaseTable& base, const char* where) {
  std::string sql = "SELECT rowid";
  for (const auto& column : base.columns) sql += ", " + quote_identifier(column);
  sql += " FROM main." + quote_identifier(base.name);
  if (where && *where) sql += std::string(" WHERE ") + where;
  return sql;
}

const BaseTable& scanned_table(HybridVtab* vtab, bool relation) {
  return relation ? vtab->state->relations[vtab->index].owner : vtab->state->tables[vtab->index].base;
}

// The current owner row's filled targets; notes the row as missing when it is not filled yet.
void load_targets(HybridVtab* vtab, HybridCursor* cursor) {
  auto& relation = vtab->state->relations[vtab->index];
  cursor->targets.clear();
  cursor->target = 0;
  const json shown = row_key_object(relation.owner, cursor->scan, 1);
  const std::string key = item_key(shown);
  const auto& values = vtab->state->values(relation.scope);
  const auto found = values.find(key);
  if (found == values.end()) {
    vtab->state->missing.relation_rows[vtab->index].emplace(key, shown);
    return;
  }
  if (!found->second.is_array()) return;
  for (const auto& label : found->second) {
    if (!label.is_string()) continue;
    const auto id = relation.label_ids.find(to_lower(label.get<std::string>()));
    if (id != relation.label_ids.end()) cursor->targets.push_back(id->second);
  }
}

int step_scan(HybridCursor* cursor, sqlite3_vtab* vtab) {
  const int rc = sqlite3_step(cursor->scan);
  if (rc == SQLITE_ROW) {
    ++cursor->row_number;
    return SQLITE_OK;
  }
  cursor->eof = true;
  return rc == SQLITE_DONE ? SQLITE_OK : fail(vtab, sqlite3_errmsg(sqlite3_db_handle(cursor->scan)));
}

// Relations: moves to the next (owner, target) pair, skipping owners without (filled) targets.
int advance_relation(HybridCursor* cursor, HybridVtab* vtab) {
  while (!cursor->eof && cursor->target >= cursor->targets.size()) {
    if (const int rc = step_scan(cursor, &vtab->base); rc != SQLITE_OK) return rc;
    if (!cursor->eof) load_targets(vtab, cursor);
  }
  return SQLITE_OK;
}

int filter(sqlite3_vtab_cursor* base_cursor, int, const char* where, int argc, sqlite3_value** argv, bool relation) {
  auto* cursor = cursor_of(base_cursor);
  auto* vtab = vtab_of(base_cursor);
  auto& statement = cursor->statements[where ? where : ""];
  if (!statement) {
    const std::string sql = scan_sql(scanned_table(vtab, relation), where);
    if (sqlite3_prepare_v2(vtab->state->db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK)
      return fail(&vtab->base, std::string("relmem hybrid scan: ") + sqlite3_errmsg(vtab->state->db));
  }
  sqlite3_reset(statement);
  sqlite3_clear_bindings(statement);
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(statement, i + 1, argv[i]);
  cursor->scan = statement;
  cursor->eof = false;
  cursor->key_row = -1;
  cursor->targets.clear();
  cursor->target = 0;
  if (const int rc = step_scan(cursor, &vtab->base); rc != SQLITE_OK) return rc;
  if (!relation || cursor->eof) return SQLITE_OK;
  load_targets(vtab, cursor);
  return advance_relation(cursor, vtab);
}

int table_filter(sqlite3_vtab_cursor* c, int n, const char* s, int argc, sqlite3_value** argv) {
  return filter(c, n, s, argc, argv, false);
}
int relation_filter(sqlite3_vtab_cursor* c, int n, const char* s, int argc, sqlite3_value** argv) {
  return filter(c, n, s, argc, argv, true);
}

int table_next(sqlite3_vtab_cursor* base_cursor) {
  return step_scan(cursor_of(base_cursor), base_cursor->pVtab);
}

int relation_next(sqlite3_vtab_cursor* base_cursor) {
  auto* cursor = cursor_of(base_cursor);
  ++cursor->target;
  return advance_relation(cursor, vtab_of(base_cursor));
}

int eof(sqlite3_vtab_cursor* cursor) { return cursor_of(cursor)->eof ? 1 : 0; }

int table_column(sqlite3_vtab_cursor* base_cursor, sqlite3_context* context, int column) {
  auto* cursor = cursor_of(base_cursor);
  auto* vtab = vtab_of(base_cursor);
  auto& table = vtab->state->tables[vtab->index];
  const int stored = static_cast<int>(table.base.columns.size());
  if (column < stored) {
    sqlite3_result_value(context, sqlite3_column_value(cursor->scan, column + 1));
    return SQLITE_OK;
  }
  if (cursor->key_row != cursor->row_number) {
    cursor->shown = row_key_object(table.base, cursor->scan, 1);
    cursor->key = item_key(cursor->shown);
    cursor->key_row = cursor->row_number;
  }
  auto& state = table.columns[column - stored];
  const auto& values = vtab->state->values(state.scope);
  const auto found = values.find(cursor->key);
  if (found == values.end()) {
    auto& row = vtab->state->missing.table_rows[vtab->index][cursor->key];
    row.shown = cursor->shown;
    row.columns.insert(column - stored);
    sqlite3_result_null(context);
    return SQLITE_OK;
  }
  if (!state.declaration.reference || !found->second.is_string()) {
    set_result(context, state.declaration.reference ? json() : found->second);
    return SQLITE_OK;
  }
  const auto id = state.label_ids.find(to_lower(found->second.get<std::string>()));
  if (id == state.label_ids.end()) sqlite3_result_null(context);
  else sqlite3_result_int64(context, id->second);
  return SQLITE_OK;
}

int relation_column(sqlite3_vtab_cursor* base_cursor, sqlite3_context* context, int column) {
  auto* cursor = cursor_of(base_cursor);
  if (column == 0) {
    const int owner_id = vtab_of(base_cursor)->state->relations[vtab_of(base_cursor)->index].owner_id_index;
    sqlite3_result_value(context, sqlite3_column_value(cursor->scan, owner_id + 1));
  } else {
    sqlite3_result_int64(context, cursor->targets[cursor->target]);
  }
  return SQLITE_OK;
}

int table_rowid(sqlite3_vtab_cursor* cursor, sqlite3_int64* rowid) {
  *rowid = sqlite3_column_int64(cursor_of(cursor)->scan, 0);
  return SQLITE_OK;
}

int relation_rowid(sqlite3_vtab_cursor* base_cursor, sqlite3_int64* rowid) {
  const auto* cursor = cursor_of(base_cursor);
  *rowid = sqlite3_column_int64(cursor->scan, 0) * 65536 + static_cast<sqlite3_int64>(cursor->target);
  return SQLITE_OK;
}

sqlite3_module make_module(bool relation) {
  sqlite3_module module{};
  module.iVersion = 1;
  module.xCreate = relation ? relation_connect : table_connect;
  module.xConnect = relation ? relation_connect : table_connect;
  module.xBestIndex = relation ? relation_best_index : table_best_index;
  module.xDisconnect = disconnect;
  module.xDestroy = disconnect;
  module.xOpen = open_cursor;
  module.xClose = close_cursor;
  module.xFilter = relation ? relation_filter : table_filter;
  module.xNext = relation ? relation_next : table_next;
  module.xEof = eof;
  module.xColumn = relation ? relation_column : table_column;
  module.xRowid = relation ? relation_rowid : table_rowid;
  return module;
}

const sqlite3_module kTableModule = make_module(false);
const sqlite3_module kRelationModule = make_module(true);

}  // namespace

json value_to_json(sqlite3_value* value) {
  switch (sqlite3_value_type(value)) {
    case SQLITE_INTEGER: return json(static_cast<int64_t>(sqlite3_value_int64(value)));
    case SQLITE_FLOAT: return json(sqlite3_value_double(value));
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
      return json(std::string(text, static_cast<size_t>(sqlite3_value_bytes(value))));
    }
    case SQLITE_BLOB: return json("<blob>");
    default: return json();
  }
}

json row_key_object(const BaseTable& table, sqlite3_stmt* row, int first_column) {
  json shown = json::object();
  for (int index : table.key_indexes)
    shown[table.columns[index]] = value_to_json(sqlite3_column_value(row, first_column + index));
  return shown;
}

void set_result(sqlite3_context* context, const json& value) {
  if (value.is_boolean()) sqlite3_result_int64(context, value.get<bool>() ? 1 : 0);
  else if (value.is_number_integer()) sqlite3_result_int64(context, value.get<int64_t>());
  else if (value.is_number()) sqlite3_result_double(context, value.get<double>());
  else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    sqlite3_result_text(context, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  } else if (value.is_array()) {
    const std::string text = value.dump();
    sqlite3_result_text(context, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_result_null(context);
  }
}

void register_hybrid_modules(SessionState* state) {
  if (sqlite3_create_module_v2(state->db, "relmem_table", &kTableModule, state, nullptr) != SQLITE_OK ||
      sqlite3_create_module_v2(state->db, "relmem_relation", &kRelationModule, state, nullptr) != SQLITE_OK)
    throw Error(std::string("hybrid session: cannot register modules: ") + sqlite3_errmsg(state->db));
}

}  // namespace relmem::hybrid
