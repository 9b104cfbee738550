#pragma once
// Private to the catalog: replacements for SQLite's instr(), replace(), like() and glob(). The built-in forms can
// spend quadratic time inside one call (instr of a 4 MB text and a 400 KB needle runs for seconds), where neither
// the progress handler nor sqlite3_interrupt can stop them. instr() and replace() here are linear (glibc's memmem
// is worst-case linear); like() and glob() backtrack at most to their last wildcard and check `stop` as they go.
// They follow the built-ins' documented semantics: NULL in, NULL out; instr counts characters for text and bytes
// for two blobs; LIKE folds ASCII case only and takes an optional ESCAPE character; GLOB knows *, ?, [...] and
// [^...].
#include <sqlite3.h>

#include <atomic>

namespace relmem {

// Registers the four functions on `db`; `stop` must outlive the connection's statements.
void install_bounded_functions(sqlite3* db, const std::atomic<bool>* stop);

}  // namespace relmem
