#pragma once
// relmem's own SQLite files (the response cache, the fill store), never a user's database.
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace relmem {

// Opens or creates `path` read-write (parent folders included, busy timeout, WAL journal) and claims it with PRAGMA
// application_id = `application_id`. Refuses a file that is another application's database (another id, or tables
// without one), so a user's database is never written by mistake. `what` names the file in errors ("fill store").
// Throws relmem::Error; close the handle with sqlite3_close.
sqlite3* open_own_database(const std::string& path, int64_t application_id, const std::string& what);

}  // namespace relmem
