#pragma once
// Private to the catalog: replacements for the SQLite functions that can spend seconds inside one call, where
// neither the progress handler nor sqlite3_interrupt can stop them (docs/hardening.md lists every built-in
// function and its worst case). instr(), replace(), like() and glob() are replaced here (instr of a 4 MB text and a
// 400 KB needle runs for seconds in SQLite's own); instr() and replace() here are linear (glibc's memmem
// is worst-case linear); like() and glob() backtrack at most to their last wildcard and check `stop` as they go.
// They follow the built-ins' documented semantics: NULL in, NULL out; instr counts characters for text and bytes
// for two blobs; LIKE folds ASCII case only and takes an optional ESCAPE character; GLOB knows *, ?, [...] and
// [^...].
#include <sqlite3.h>

#include <atomic>

namespace relmem {

// Registers every replacement on `db` (the three groups below); `stop` must outlive the connection's statements.
void install_bounded_functions(sqlite3* db, const std::atomic<bool>* stop);

// trim(), ltrim() and rtrim(): SQLite compares each character with the whole trim set (a 130,000-character set
// runs for minutes); these look the characters up in a hash set and watch `stop` (trim_functions.cpp).
void install_trim_functions(sqlite3* db, const std::atomic<bool>* stop);

// SQLite's own json_patch(), json_set(), json_insert() and strftime(), called once their arguments are within
// limits that keep them short (json_set on a path of 100,000 steps overflows the stack): clear errors beyond
// (checked_builtin_functions.cpp).
void install_checked_builtin_functions(sqlite3* db);

}  // namespace relmem
