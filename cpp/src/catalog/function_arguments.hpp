#pragma once
// Private to the catalog: reading the arguments of the SQL functions relmem registers in place of SQLite's own
// (bounded_functions.hpp), and the flag they watch to stop when the statement's time is up.
#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace relmem {

// Work units (bytes compared, characters read) between two looks at the stop flag.
constexpr uint64_t kStepsPerStopCheck = 1 << 16;

inline const std::atomic<bool>& stop_flag(sqlite3_context* context) {
  return *static_cast<const std::atomic<bool>*>(sqlite3_user_data(context));
}

// The value as text, or false (with the error set) when SQLite ran out of memory converting it.
inline bool text_of(sqlite3_context* context, sqlite3_value* value, std::string_view& out) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  if (!text) {
    sqlite3_result_error_nomem(context);
    return false;
  }
  out = std::string_view(text, static_cast<size_t>(sqlite3_value_bytes(value)));
  return true;
}

inline std::string_view blob_of(sqlite3_value* value) {
  const auto* data = static_cast<const char*>(sqlite3_value_blob(value));
  return data ? std::string_view(data, static_cast<size_t>(sqlite3_value_bytes(value))) : std::string_view();
}

inline bool any_null(int argc, sqlite3_value** argv) {
  for (int i = 0; i < argc; ++i)
    if (sqlite3_value_type(argv[i]) == SQLITE_NULL) return true;
  return false;
}

}  // namespace relmem
