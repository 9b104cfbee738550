#include "fts5_query_check.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
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
constexpr std::array<const char*, 16> kWritesP2 = {"Integer", "Int64",      "Real",    "String8", "String", "Blob",
                                                   "Variable", "SCopy",     "IntCopy", "Rowid",   "RowData", "SorterData",
                                                   "Sequence", "OffsetLimit", "Not",   "BitNot"};
constexpr std::array<const char*, 5> kWritesP2More = {"IsTrue", "VRowid", "IdxRowid", "Count", "ReadCookie"};
constexpr std::array<const char*, 25> kWritesP3 = {
    "Column",  "VColumn", "Function",  "PureFunc", "Concat",   "Add",      "Subtract",   "Multiply", "Divide",
    "Remainder", "BitAnd", "BitOr",    "ShiftLeft", "ShiftRight", "And",   "Or",         "MakeRecord", "NewRowid",
    "AggValue", "AggStep", "AggStep1", "AggInverse", "RowSetRead", "ZeroOrNull", "Offset"};
constexpr std::array<const char*, 3> kWritesP1 = {"AggFinal", "SoftNull", "Cast"};

bool writes(const Instruction& op, int64_t reg) {
  if (op.opcode == "Null" || op.opcode == "BeginSubrtn") return reg >= op.p2 && reg <= std::max(op.p2, op.p3);
  if (op.opcode == "Copy") return reg >= op.p2 && reg <= op.p2 + op.p3;
  if (op.opcode == "Move") return reg >= op.p2 && reg < op.p2 + std::max<int64_t>(op.p3, 1);
  if (is_one_of(op.opcode, kWritesP2) || is_one_of(op.opcode, kWritesP2More)) return op.p2 == reg;
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

// Why the value register `reg` holds before `program` hands it to FTS5 is not a short literal, or nullopt. Every
// instruction that may write it must be a string literal within the bound, NULL, or a copy of such a register.
std::optional<std::string> check_register(const std::vector<Instruction>& program, int64_t reg, const TokenCounter& tokens,
                                          std::set<int64_t>& seen) {
  static const std::string computed =
      "an FTS5 query string or pattern must be a string literal in the SQL, so that its length can be checked before "
      "it runs, and this one is computed";
  if (!seen.insert(reg).second) return std::nullopt;
  bool written = false;
  for (const Instruction& op : program) {
    if (!writes(op, reg)) continue;
    written = true;
    if (op.opcode == "String8" || op.opcode == "String") {
      const size_t n = tokens.count(op.p4);
      if (n > kMaxFts5QueryTokens)
        return "an FTS5 query may hold at most " + std::to_string(kMaxFts5QueryTokens) + " tokens, and " +
               quoted_start(op.p4) + " holds " + std::to_string(n) +
               " (FTS5 matches a phrase against a document in one step that the time limit cannot stop); search for "
               "fewer words";
    } else if (op.opcode == "Null" || op.opcode == "BeginSubrtn" || op.opcode == "SoftNull") {
    } else if (op.opcode == "SCopy" || op.opcode == "Copy" || op.opcode == "IntCopy" || op.opcode == "Move") {
      if (auto why = check_register(program, op.p1 + (reg - op.p2), tokens, seen)) return why;
    } else {
      return computed;
    }
  }
  if (!written) return computed;
  return std::nullopt;
}

// The FTS5 tables' declarations, or none.
std::vector<std::string> fts5_declarations(sqlite3* db) {
  std::vector<std::string> declarations;
  Statement stmt = prepare(db, "SELECT sql FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL TABLE%USING%fts5%'");
  while (stmt && sqlite3_step(stmt.get()) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
    declarations.emplace_back(text ? text : "");
  }
  return declarations;
}

bool contains_ignoring_case(const std::string& text, const std::string& word) {
  return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

}  // namespace

std::optional<std::string> refuse_unbounded_fts5_queries(sqlite3* db, const std::string& sql) {
  const std::vector<std::string> declarations = fts5_declarations(db);
  if (declarations.empty()) return std::nullopt;
  const bool every_character = std::any_of(declarations.begin(), declarations.end(), [](const std::string& sql) {
    return contains_ignoring_case(sql, "trigram") || contains_ignoring_case(sql, "separators");
  });

  Statement explain = prepare(db, "EXPLAIN " + sql);
  if (!explain) return "the statement's FTS5 queries could not be checked: " + valid_utf8(sqlite3_errmsg(db));
  std::vector<Instruction> program;
  int rc;
  while ((rc = sqlite3_step(explain.get())) == SQLITE_ROW) {
    const auto* opcode = reinterpret_cast<const char*>(sqlite3_column_text(explain.get(), 1));
    const auto* p4 = reinterpret_cast<const char*>(sqlite3_column_text(explain.get(), 5));
    program.push_back({opcode ? opcode : "", sqlite3_column_int64(explain.get(), 2), sqlite3_column_int64(explain.get(), 3),
                       sqlite3_column_int64(explain.get(), 4),
                       p4 ? std::string(p4, static_cast<size_t>(sqlite3_column_bytes(explain.get(), 5))) : ""});
  }
  if (rc != SQLITE_DONE) return "the statement's FTS5 queries could not be checked: " + valid_utf8(sqlite3_errmsg(db));

  const TokenCounter tokens(db, every_character);
  for (const Instruction& op : program) {
    if (op.opcode != "VFilter") continue;
    const std::string kinds = fts5_argument_kinds(op.p4);
    for (size_t j = 0; j < kinds.size(); ++j) {
      if (kinds[j] != 'M' && kinds[j] != 'm' && kinds[j] != 'L' && kinds[j] != 'G') continue;
      std::set<int64_t> seen;
      // VFilter's P3 holds idxNum, P3 + 1 the argument count, then the arguments.
      if (auto why = check_register(program, op.p3 + 2 + static_cast<int64_t>(j), tokens, seen)) return why;
    }
  }
  return std::nullopt;
}

}  // namespace relmem
