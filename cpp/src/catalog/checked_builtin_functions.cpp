#include <string>
#include <string_view>

#include "bounded_functions.hpp"
#include "function_arguments.hpp"

namespace relmem {
namespace {

constexpr int kJsonSubtype = 'J';        // what SQLite's JSON functions mark their results with
constexpr size_t kMaxJsonPathSteps = 2000;  // SQLite's own limit on JSON nesting (JSON_MAX_DEPTH)
// json_patch compares each member of the patch with the members of the target object it merges into: at about
// 50 ns a comparison on the development machine, this many take a few tenths of a second.
constexpr uint64_t kMaxPatchComparisons = 4'000'000;
// strftime() spends about 2 µs on each %J of its format, and never returns to SQLite's loop while it does.
constexpr size_t kMaxStrftimeFormatBytes = 1 << 16;

// A connection of this thread's own, without relmem's replacements, that computes SQLite's built-in functions once
// their arguments have been checked.
sqlite3* builtin_connection() {
  struct Owned {
    sqlite3* db = nullptr;
    ~Owned() { sqlite3_close_v2(db); }
  };
  thread_local Owned owned;
  if (!owned.db && sqlite3_open_v2(":memory:", &owned.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(owned.db);
    owned.db = nullptr;
  }
  return owned.db;
}

// Calls SQLite's `name` on the arguments and returns its result, JSON arguments passed on as JSON.
void call_builtin(sqlite3_context* context, const char* name, int argc, sqlite3_value** argv, bool json_result) {
  sqlite3* db = builtin_connection();
  if (!db) {
    sqlite3_result_error_nomem(context);
    return;
  }
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, sqlite3_limit(sqlite3_context_db_handle(context), SQLITE_LIMIT_LENGTH, -1));
  std::string sql = std::string("SELECT ") + name + "(";
  for (int i = 0; i < argc; ++i) {
    const std::string parameter = "?" + std::to_string(i + 1);
    sql += (i ? ", " : "") + (sqlite3_value_subtype(argv[i]) == kJsonSubtype ? "json(" + parameter + ")" : parameter);
  }
  sql += ")";
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_result_error(context, sqlite3_errmsg(db), -1);
    return;
  }
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(stmt, i + 1, argv[i]);
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    sqlite3_result_value(context, sqlite3_column_value(stmt, 0));
    if (json_result && sqlite3_column_type(stmt, 0) == SQLITE_TEXT) sqlite3_result_subtype(context, kJsonSubtype);
  } else if (rc == SQLITE_TOOBIG) {
    sqlite3_result_error_toobig(context);
  } else if (rc == SQLITE_NOMEM) {
    sqlite3_result_error_nomem(context);
  } else {
    sqlite3_result_error(context, sqlite3_errmsg(db), -1);
  }
  sqlite3_finalize(stmt);
}

// The members of every object in a JSON text: its colons outside strings.
uint64_t json_members(std::string_view json) {
  uint64_t members = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ':') {
      ++members;
    }
  }
  return members;
}

// The steps of a JSON path: an upper bound, its '.' and '[' characters.
size_t json_path_steps(std::string_view path) {
  size_t steps = 0;
  for (char c : path) steps += c == '.' || c == '[';
  return steps;
}

void json_patch_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  std::string_view target, patch;
  if (any_null(argc, argv)) return call_builtin(context, "json_patch", argc, argv, true);
  if (!text_of(context, argv[0], target) || !text_of(context, argv[1], patch)) return;
  const uint64_t target_members = json_members(target), patch_members = json_members(patch);
  if (target_members > 0 && patch_members > kMaxPatchComparisons / target_members) {
    const std::string message = "json_patch: a target of " + std::to_string(target_members) + " members and a patch of " +
                                std::to_string(patch_members) + " may take " + std::to_string(target_members) + " x " +
                                std::to_string(patch_members) + " comparisons, more than the limit of " +
                                std::to_string(kMaxPatchComparisons) + "; patch smaller objects";
    sqlite3_result_error(context, message.c_str(), -1);
    return;
  }
  call_builtin(context, "json_patch", argc, argv, true);
}

// json_set() and json_insert() recurse once per step of a path that they create: a path of some 100,000 steps
// overflows the stack.
void json_edit(sqlite3_context* context, int argc, sqlite3_value** argv, const char* name) {
  for (int i = 1; i < argc; i += 2) {
    if (sqlite3_value_type(argv[i]) != SQLITE_TEXT) continue;
    std::string_view path;
    if (!text_of(context, argv[i], path)) return;
    const size_t steps = json_path_steps(path);
    if (steps > kMaxJsonPathSteps) {
      const std::string message = std::string(name) + ": a JSON path of " + std::to_string(steps) +
                                  " steps; at most " + std::to_string(kMaxJsonPathSteps) + " (the deepest JSON SQLite reads)";
      sqlite3_result_error(context, message.c_str(), -1);
      return;
    }
  }
  call_builtin(context, name, argc, argv, true);
}

void json_set_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  json_edit(context, argc, argv, "json_set");
}
void json_insert_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  json_edit(context, argc, argv, "json_insert");
}

// strftime('now') in the built-in connection reads the clock itself: the same moment as the statement's other
// 'now' to within the call's own duration.
void strftime_function(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc > 0 && sqlite3_value_bytes(argv[0]) > static_cast<int>(kMaxStrftimeFormatBytes)) {
    const std::string message = "strftime: a format of " + std::to_string(sqlite3_value_bytes(argv[0])) +
                                " bytes; at most " + std::to_string(kMaxStrftimeFormatBytes);
    sqlite3_result_error(context, message.c_str(), -1);
    return;
  }
  call_builtin(context, "strftime", argc, argv, false);
}

}  // namespace

void install_checked_builtin_functions(sqlite3* db) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_INNOCUOUS;
  sqlite3_create_function_v2(db, "json_patch", 2, kFlags | SQLITE_DETERMINISTIC, nullptr, json_patch_function,
                             nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "json_set", -1, kFlags | SQLITE_DETERMINISTIC, nullptr, json_set_function, nullptr,
                             nullptr, nullptr);
  sqlite3_create_function_v2(db, "json_insert", -1, kFlags | SQLITE_DETERMINISTIC, nullptr, json_insert_function,
                             nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "strftime", -1, kFlags, nullptr, strftime_function, nullptr, nullptr, nullptr);
}

}  // namespace relmem
