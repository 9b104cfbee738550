#include "relmem/catalog/schema.hpp"

#include <algorithm>
#include <cctype>

#include "../common/ascii_case.hpp"

namespace relmem {
namespace {

}  // namespace

const Column* Table::column(const std::string& wanted) const {
  for (const auto& c : columns)
    if (iequals(c.name, wanted)) return &c;
  return nullptr;
}

std::string referenced_column(const ForeignKey& key, const Table& target) {
  if (!key.to_column.empty()) return key.to_column;
  std::string primary;
  for (const auto& column : target.columns) {
    if (!column.primary_key) continue;
    if (!primary.empty()) return "";
    primary = column.name;
  }
  return primary;
}

const Table* Schema::table(const std::string& wanted) const {
  for (const auto& t : tables)
    if (iequals(t.name, wanted)) return &t;
  return nullptr;
}

// SQLite's affinity rules (https://www.sqlite.org/datatype3.html, section 3.1), in the same order.
bool is_text_type(const std::string& declared_type) {
  const std::string t = to_upper(declared_type);
  if (t.find("INT") != std::string::npos) return false;
  if (t.find("CHAR") != std::string::npos || t.find("CLOB") != std::string::npos ||
      t.find("TEXT") != std::string::npos)
    return true;
  return t.empty();
}

bool is_numeric_type(const std::string& declared_type) {
  const std::string t = to_upper(declared_type);
  if (t.empty() || is_text_type(declared_type)) return false;
  return t.find("BLOB") == std::string::npos;
}

}  // namespace relmem
