#pragma once
// Case-insensitive handling of SQL names, keywords and declared types, and of the short answers hybrid fills compare:
// ASCII letters only, whatever the process's locale (other bytes, UTF-8 included, are left as they are).
#include <algorithm>
#include <string>
#include <string_view>

namespace relmem {

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
inline char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

inline std::string to_lower(std::string text) {
  for (char& c : text) c = ascii_lower(c);
  return text;
}

inline std::string to_upper(std::string text) {
  for (char& c : text) c = ascii_upper(c);
  return text;
}

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

}  // namespace relmem
