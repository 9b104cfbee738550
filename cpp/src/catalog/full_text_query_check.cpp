#include "full_text_query_check.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "../common/utf8.hpp"

namespace relmem {
namespace {

using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

Statement prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr);
  return Statement(raw, &sqlite3_finalize);
}

// One instruction of a statement's program, as EXPLAIN lists it.
struct Instruction {
  std::string opcode;
  int64_t p1 = 0, p2 = 0, p3 = 0;
  std::string p4;
};

template <size_t N>
bool is_one_of(const std::string& opcode, const std::array<const char*, N>& names) {
  return std::any_of(names.begin(), names.end(), [&](const char* name) { return opcode == name; });
}

// Opcodes that write the register named by P2 or by P3, or by P1 in place.
constexpr std::array<const char*, 21> kWritesP2 = {
    "Integer", "Int64",      "Real",       "String8", "String", "Blob",     "Variable", "SCopy",  "IntCopy",  "Rowid",
    "RowData", "SorterData", "Sequence", "OffsetLimit", "Not", "BitNot", "IsTrue",   "VRowid", "IdxRowid", "Count",
    "ReadCookie"};
constexpr std::array<const char*, 25> kWritesP3 = {
    "Column",  "VColumn", "Function",  "PureFunc", "Concat",   "Add",      "Subtract",   "Multiply", "Divide",
    "Remainder", "BitAnd", "BitOr",    "ShiftLeft", "ShiftRight", "And",   "Or",         "MakeRecord", "NewRowid",
    "AggValue", "AggStep", "AggStep1", "AggInverse", "RowSetRead", "ZeroOrNull", "Offset"};
constexpr std::array<const char*, 3> kWritesP1 = {"AggFinal", "SoftNull", "Cast"};

bool writes(const Instruction& op, int64_t reg) {
  if (op.opcode == "Null" || op.opcode == "BeginSubrtn") return reg >= op.p2 && reg <= std::max(op.p2, op.p3);
  if (op.opcode == "Copy") return reg >= op.p2 && reg <= op.p2 + op.p3;
  if (op.opcode == "Move") return reg >= op.p2 && reg < op.p2 + std::max<int64_t>(op.p3, 1);
  if (is_one_of(op.opcode, kWritesP2)) return op.p2 == reg;
  if (is_one_of(op.opcode, kWritesP3)) return op.p3 == reg;
  if (is_one_of(op.opcode, kWritesP1)) return op.p1 == reg;
  return false;
}

// The kinds of the arguments an FTS5 table's xBestIndex asks for, from its idxStr ("M2", "=M1rL0"): 'M' or 'm' a
// query string, 'L' or 'G' a LIKE or GLOB pattern (a trigram table turns it into a phrase), 'r' a rank function,
// '=', '<', '>' a rowid. Empty when `idx` is not in that form (another virtual table).
std::string fts5_argument_kinds(const std::string& idx) {
  std::string kinds;
  for (size_t i = 0; i < idx.size();) {
    const char kind = idx[i++];
    const size_t digits = std::find_if(idx.begin() + static_cast<std::ptrdiff_t>(i), idx.end(),
                                       [](char c) { return c < '0' || c > '9'; }) - idx.begin() - static_cast<std::ptrdiff_t>(i);
    if (kind == 'M' || kind == 'L' || kind == 'G') {
      if (digits == 0) return "";
    } else if (kind == 'm') {
    } else if (kind == 'r' || kind == '=' || kind == '<' || kind == '>') {
      if (digits != 0) return "";
    } else {
      return "";
    }
    i += digits;
    kinds += kind;
  }
  return kinds;
}

fts5_api* find_fts5_api(sqlite3* db) {
  fts5_api* api = nullptr;
  Statement stmt = prepare(db, "SELECT fts5(?1)");
  if (!stmt) return nullptr;
  sqlite3_bind_pointer(stmt.get(), 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
  sqlite3_step(stmt.get());
  return api;
}

int count_token(void* count, int, const char*, int, int, int) {
  ++*static_cast<size_t*>(count);
  return SQLITE_OK;
}

class TokenCounter {
 public:
  TokenCounter(sqlite3* db, bool every_character) {
    fts5_api* api = every_character ? nullptr : find_fts5_api(db);
    void* user_data = nullptr;
    if (api && api->xFindTokenizer(api, "unicode61", &user_data, &module_) == SQLITE_OK)
      module_.xCreate(user_data, nullptr, 0, &tokenizer_);
  }
  ~TokenCounter() {
    if (tokenizer_) module_.xDelete(tokenizer_);
  }
  TokenCounter(const TokenCounter&) = delete;
  TokenCounter& operator=(const TokenCounter&) = delete;

  size_t count(const std::string& text) const {
    size_t tokens = 0;
    if (tokenizer_) {
      module_.xTokenize(tokenizer_, &tokens, FTS5_TOKENIZE_QUERY, text.data(), static_cast<int>(text.size()), count_token);
      return tokens;
    }
    // Without unicode61 (or where a tokenizer may split finer): at most one token per character.
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  }

 private:
  fts5_tokenizer module_{};
  Fts5Tokenizer* tokenizer_ = nullptr;
};

std::string quoted_start(const std::string& text) {
  constexpr size_t kShown = 60;
  if (text.size() <= kShown) return "'" + text + "'";
  size_t end = kShown;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return "'" + text.substr(0, end) + "...'";
}

// Why the value register `reg` holds before `program` hands it to a full-text table is not a short literal, or
// nullopt. Every instruction that may write it must be a string literal within the bound, NULL, or a copy of such a
// register.
std::optional<std::string> check_register(const std::vector<Instruction>& program, int64_t reg, const TokenCounter& tokens,
                                          size_t max_tokens, std::set<int64_t>& seen) {
  static const std::string computed =
      "a full-text query string or pattern must be a string literal in the SQL, so that its length can be checked "
      "before it runs, and this one is computed";
  if (!seen.insert(reg).second) return std::nullopt;
  bool written = false;
  for (const Instruction& op : program) {
    if (!writes(op, reg)) continue;
    written = true;
    if (op.opcode == "String8" || op.opcode == "String") {
      const size_t n = tokens.count(op.p4);
      if (n > max_tokens)
        return "a full-text query on this table may hold at most " + std::to_string(max_tokens) + " tokens, and " +
               quoted_start(op.p4) + " holds " + std::to_string(n) +
               " (a phrase is matched against a document in one step that the time limit cannot stop); search for "
               "fewer words";
    } else if (op.opcode == "Null" || op.opcode == "BeginSubrtn" || op.opcode == "SoftNull") {
    } else if (op.opcode == "SCopy" || op.opcode == "Copy" || op.opcode == "IntCopy" || op.opcode == "Move") {
      if (auto why = check_register(program, op.p1 + (reg - op.p2), tokens, max_tokens, seen)) return why;
    } else {
      return computed;
    }
  }
  if (!written) return computed;
  return std::nullopt;
}

struct FullTextTable {
  std::string name;
  std::string module;  // "fts3", "fts4" or "fts5", lower case
  std::string declaration;
};

// The module a CREATE VIRTUAL TABLE statement names, in lower case.
std::string module_of(const std::string& declaration) {
  std::string lower = declaration;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t i = lower.find(" using");
  if (i == std::string::npos) return "";
  i += 6;
  while (i < lower.size() && std::isspace(static_cast<unsigned char>(lower[i]))) ++i;
  size_t end = i;
  while (end < lower.size() && (std::isalnum(static_cast<unsigned char>(lower[end])) || lower[end] == '_')) ++end;
  return lower.substr(i, end - i);
}

std::vector<FullTextTable> full_text_tables(sqlite3* db) {
  std::vector<FullTextTable> tables;
  Statement stmt = prepare(db, "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'");
  while (stmt && sqlite3_step(stmt.get()) == SQLITE_ROW) {
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 1));
    FullTextTable table{name ? name : "", "", text ? text : ""};
    table.module = module_of(table.declaration);
    if (table.module == "fts3" || table.module == "fts4" || table.module == "fts5") tables.push_back(std::move(table));
  }
  return tables;
}

bool contains_ignoring_case(const std::string& text, const std::string& word) {
  return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

// The program EXPLAIN lists for `sql`, or nullopt (with SQLite's message in `error`).
std::optional<std::vector<Instruction>> program_of(sqlite3* db, const std::string& sql, std::string& error) {
  Statement explain = prepare(db, "EXPLAIN " + sql);
  std::vector<Instruction> program;
  int rc = SQLITE_ERROR;
  while (explain && (rc = sqlite3_step(explain.get())) == SQLITE_ROW) {
    const auto* opcode = reinterpret_cast<const char*>(sqlite3_column_text(explain.get(), 1));
    const auto* p4 = reinterpret_cast<const char*>(sqlite3_column_text(explain.get(), 5));
    program.push_back({opcode ? opcode : "", sqlite3_column_int64(explain.get(), 2), sqlite3_column_int64(explain.get(), 3),
                       sqlite3_column_int64(explain.get(), 4),
                       p4 ? std::string(p4, static_cast<size_t>(sqlite3_column_bytes(explain.get(), 5))) : ""});
  }
  if (rc != SQLITE_DONE) {
    error = valid_utf8(sqlite3_errmsg(db));
    return std::nullopt;
  }
  return program;
}

// The "vtab:<address>" EXPLAIN shows when a program opens `table`: the connection keeps one such object per virtual
// table, so it tells the FTS3/4 tables' cursors apart from other virtual tables' in another program.
std::string virtual_table_of(sqlite3* db, const std::string& table) {
  std::string quoted = "\"";
  for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  std::string error;
  const auto program = program_of(db, "SELECT 1 FROM " + quoted + "\"", error);
  if (!program) return "";
  for (const Instruction& op : *program)
    if (op.opcode == "VOpen") return op.p4;
  return "";
}

}  // namespace

std::optional<std::string> refuse_unbounded_full_text_queries(sqlite3* db, const std::string& sql) {
  const std::vector<FullTextTable> tables = full_text_tables(db);
  if (tables.empty()) return std::nullopt;
  const bool every_character = std::any_of(tables.begin(), tables.end(), [](const FullTextTable& table) {
    return contains_ignoring_case(table.declaration, "trigram") || contains_ignoring_case(table.declaration, "separators");
  });
  std::string error;
  const auto program = program_of(db, sql, error);
  if (!program) return "the statement's full-text queries could not be checked: " + error;
  std::set<std::string> fts34;
  for (const FullTextTable& table : tables)
    if (table.module != "fts5") fts34.insert(virtual_table_of(db, table.name));
  fts34.erase("");
  std::map<int64_t, std::string> cursor_tables;
  for (const Instruction& op : *program)
    if (op.opcode == "VOpen") cursor_tables[op.p1] = op.p4;

  const TokenCounter tokens(db, every_character);
  for (size_t i = 0; i < program->size(); ++i) {
    const Instruction& op = (*program)[i];
    if (op.opcode != "VFilter") continue;
    // VFilter's P3 holds idxNum, P3 + 1 the argument count, then the arguments.
    std::set<int64_t> seen;
    const std::string kinds = fts5_argument_kinds(op.p4);
    for (size_t j = 0; j < kinds.size(); ++j) {
      if (kinds[j] != 'M' && kinds[j] != 'm' && kinds[j] != 'L' && kinds[j] != 'G') continue;
      if (auto why = check_register(*program, op.p3 + 2 + static_cast<int64_t>(j), tokens, kMaxFts5QueryTokens, seen))
        return why;
    }
    if (!kinds.empty() || !fts34.count(cursor_tables[op.p1])) continue;
    // FTS3/4 take the query first where idxNum's low 16 bits are 2 or more (a full-text search; the high bits flag
    // language and rowid arguments); the instruction before the argument count sets idxNum.
    const bool known_not_full_text = i >= 2 && (*program)[i - 2].opcode == "Integer" && (*program)[i - 2].p2 == op.p3 &&
                                     ((*program)[i - 2].p1 & 0xFFFF) < 2;
    if (known_not_full_text) continue;
    if (auto why = check_register(*program, op.p3 + 2, tokens, kMaxFts4QueryTokens, seen)) return why;
  }
  return std::nullopt;
}

}  // namespace relmem
