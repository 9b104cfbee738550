#include "relmem/hybrid/hybrid_schema.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "relmem/common.hpp"
#include "text.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

bool same_name(const std::string& a, const std::string& b) { return to_upper(a) == to_upper(b); }

std::string unquote(std::string name) {
  auto trim = [](std::string& s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    s.erase(0, i);
  };
  trim(name);
  if (name.size() >= 2 && (name.front() == '`' || name.front() == '"' || name.front() == '[') &&
      (name.back() == '`' || name.back() == '"' || name.back() == ']'))
    name = name.substr(1, name.size() - 2);
  return name;
}

std::string required_text(const json& object, const char* field, const std::string& where) {
  if (!object.is_object() || !object.contains(field) || !object[field].is_string() ||
      object[field].get<std::string>().empty())
    throw Error("hybrid schema: " + where + " needs a non-empty text field '" + field + "'");
  return object[field].get<std::string>();
}

std::string optional_text(const json& object, const char* field, const std::string& fallback = "") {
  return object.contains(field) && object[field].is_string() ? object[field].get<std::string>() : fallback;
}

std::vector<std::string> text_list(const json& object, const char* field, const std::string& where) {
  std::vector<std::string> out;
  if (!object.contains(field) || object[field].is_null()) return out;
  if (!object[field].is_array()) throw Error("hybrid schema: " + where + " field '" + field + "' must be a list");
  for (const auto& item : object[field]) {
    if (!item.is_string()) throw Error("hybrid schema: " + where + " field '" + field + "' must list text");
    out.push_back(unquote(item.get<std::string>()));
  }
  return out;
}

ValueDomain domain_from_json(const json& column, const std::string& where) {
  ValueDomain domain;
  domain.values = text_list(column, "values", where);
  if (column.contains("values_from") && !column["values_from"].is_null()) {
    const auto ref = parse_column_reference(optional_text(column, "values_from"));
    if (!ref) throw Error("hybrid schema: " + where + " 'values_from' must name a column as table.column");
    domain.table = ref->first;
    domain.column = ref->second;
  }
  return domain;
}

VirtualColumn column_from_json(const json& object, const std::string& table) {
  VirtualColumn column;
  column.name = unquote(required_text(object, "name", "a column of " + table));
  const std::string where = "column " + table + "." + column.name;
  column.type = parse_fill_type(optional_text(object, "type", "TEXT"));
  column.meaning = optional_text(object, "meaning");
  column.domain = domain_from_json(object, where);
  if (object.contains("references") && !object["references"].is_null()) {
    const auto& ref = object["references"];
    column.reference = Reference{unquote(required_text(ref, "table", where + " references")),
                                 unquote(optional_text(ref, "id", "id")),
                                 unquote(required_text(ref, "label", where + " references"))};
  }
  return column;
}

json domain_to_json(const ValueDomain& domain, json& out) {
  if (!domain.values.empty()) out["values"] = domain.values;
  if (!domain.table.empty()) out["values_from"] = domain.table + "." + domain.column;
  return out;
}

}  // namespace

FillType parse_fill_type(const std::string& name) {
  const std::string t = to_upper(unquote(name));
  if (t.empty() || t.find("CHAR") != std::string::npos || t.find("TEXT") != std::string::npos ||
      t.find("CLOB") != std::string::npos || t == "STRING")
    return FillType::Text;
  if (t.find("BOOL") != std::string::npos) return FillType::Boolean;
  if (t == "ANY") return FillType::Any;
  if (t.find("DATE") != std::string::npos || t.find("TIME") != std::string::npos) return FillType::Date;
  if (t.find("INT") != std::string::npos) return FillType::Integer;
  if (t.find("REAL") != std::string::npos || t.find("FLOA") != std::string::npos ||
      t.find("DOUB") != std::string::npos || t.find("NUM") != std::string::npos ||
      t.find("DEC") != std::string::npos)
    return FillType::Real;
  throw Error("hybrid schema: unknown column type '" + name + "' (TEXT, INTEGER, REAL, DATE or BOOLEAN)");
}

std::string fill_type_name(FillType type) {
  switch (type) {
    case FillType::Text: return "TEXT";
    case FillType::Integer: return "INTEGER";
    case FillType::Real: return "REAL";
    case FillType::Date: return "DATE";
    case FillType::Boolean: return "BOOLEAN";
    case FillType::Any: return "ANY";
  }
  return "TEXT";
}

std::optional<std::pair<std::string, std::string>> parse_column_reference(const std::string& text) {
  size_t split = std::string::npos, width = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote || (quote == '[' && c == ']')) quote = 0;
    } else if (c == '`' || c == '"' || c == '[') {
      quote = c;
    } else if (c == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      split = i, width = 2;
      break;
    } else if (c == '.') {
      split = i, width = 1;
      break;
    }
  }
  if (split == std::string::npos) return std::nullopt;
  auto table = unquote(text.substr(0, split)), column = unquote(text.substr(split + width));
  if (table.empty() || column.empty()) return std::nullopt;
  return std::make_pair(table, column);
}

const ValueTable* HybridSchema::value_table(const std::string& name) const {
  for (const auto& t : value_tables)
    if (same_name(t.name, name)) return &t;
  return nullptr;
}

HybridSchema HybridSchema::from_json(const json& in) {
  if (!in.is_object()) throw Error("hybrid schema: expected a JSON object");
  HybridSchema schema;
  for (const auto& t : in.value("tables", json::array())) {
    VirtualTable table;
    table.table = unquote(required_text(t, "table", "a virtual table"));
    table.key_columns = text_list(t, "keys", "table " + table.table);
    if (!t.contains("columns") || !t["columns"].is_array() || t["columns"].empty())
      throw Error("hybrid schema: table " + table.table + " needs a non-empty 'columns' list");
    for (const auto& c : t["columns"]) table.columns.push_back(column_from_json(c, table.table));
    schema.tables.push_back(std::move(table));
  }
  for (const auto& r : in.value("relations", json::array())) {
    VirtualRelation rel;
    rel.name = unquote(required_text(r, "name", "a relation"));
    const std::string where = "relation " + rel.name;
    rel.meaning = optional_text(r, "meaning");
    const auto& owner = r.value("owner", json::object());
    const auto& target = r.value("target", json::object());
    rel.owner_table = unquote(required_text(owner, "table", where + " owner"));
    rel.owner_id_column = unquote(optional_text(owner, "id", "id"));
    rel.owner_column = unquote(required_text(owner, "column", where + " owner"));
    rel.key_columns = text_list(owner, "keys", where + " owner");
    rel.target_table = unquote(required_text(target, "table", where + " target"));
    rel.target_id_column = unquote(optional_text(target, "id", "id"));
    rel.target_label_column = unquote(required_text(target, "label", where + " target"));
    rel.target_column = unquote(required_text(target, "column", where + " target"));
    schema.relations.push_back(std::move(rel));
  }
  for (const auto& v : in.value("value_tables", json::array())) {
    ValueTable table;
    table.name = unquote(required_text(v, "name", "a value table"));
    table.id_column = unquote(optional_text(v, "id", "id"));
    table.label_column = unquote(required_text(v, "label", "value table " + table.name));
    table.values = text_list(v, "values", "value table " + table.name);
    if (table.values.empty()) throw Error("hybrid schema: value table " + table.name + " needs 'values'");
    schema.value_tables.push_back(std::move(table));
  }
  return schema;
}

json HybridSchema::to_json() const {
  json out = {{"tables", json::array()}, {"relations", json::array()}, {"value_tables", json::array()}};
  for (const auto& t : tables) {
    json table = {{"table", t.table}, {"keys", t.key_columns}, {"columns", json::array()}};
    for (const auto& c : t.columns) {
      json column = {{"name", c.name}, {"type", fill_type_name(c.type)}, {"meaning", c.meaning}};
      domain_to_json(c.domain, column);
      if (c.reference)
        column["references"] = {{"table", c.reference->table}, {"id", c.reference->id_column},
                                {"label", c.reference->label_column}};
      table["columns"].push_back(column);
    }
    out["tables"].push_back(table);
  }
  for (const auto& r : relations)
    out["relations"].push_back(
        {{"name", r.name},
         {"meaning", r.meaning},
         {"owner", {{"table", r.owner_table}, {"id", r.owner_id_column}, {"column", r.owner_column},
                    {"keys", r.key_columns}}},
         {"target", {{"table", r.target_table}, {"id", r.target_id_column}, {"label", r.target_label_column},
                     {"column", r.target_column}}}});
  for (const auto& v : value_tables)
    out["value_tables"].push_back(
        {{"name", v.name}, {"id", v.id_column}, {"label", v.label_column}, {"values", v.values}});
  return out;
}

}  // namespace relmem::hybrid
