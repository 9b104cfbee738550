#include "oracle_answers.hpp"

#include <cctype>
#include <cmath>

#include "relmem/hybrid/hybrid_schema.hpp"
#include "../common/sqlite_statement.hpp"
#include "relmem/catalog/catalog.hpp"
#include "../hybrid/text.hpp"

namespace relmem::evaluation {

using hybrid::parse_column_reference;
using hybrid::text_of;

namespace {

using nlohmann::json;

// The values an answer may take: its allowed list, else the stored column it names.
std::vector<std::string> domain_of(const OracleDatabase& db, const json& spec) {
  if (spec.contains("allowed")) return spec["allowed"].get<std::vector<std::string>>();
  if (!spec.contains("allowed_from")) return {};
  const auto ref = parse_column_reference(spec["allowed_from"].get<std::string>());
  if (!ref) return {};
  const std::string table = db.table_name(ref->first);
  if (table.empty() || db.column_name(table, ref->second).empty()) return {};
  return db.distinct_texts(table, db.column_name(table, ref->second));
}

// Follows a foreign key to the label the answer is asked in ("eye_colour_id" 7 -> "Blue").
json as_label(const OracleDatabase& db, const std::string& table, const std::string& column, const json& value,
              const json& spec) {
  if (value.is_null() || (!spec.contains("allowed") && !spec.contains("allowed_from"))) return value;
  const auto key = db.foreign_key(table, column);
  if (!key) return value;
  std::string label;
  if (spec.contains("allowed_from")) {
    const auto ref = parse_column_reference(spec["allowed_from"].get<std::string>());
    if (ref && to_lower(ref->first) == to_lower(key->table)) label = db.column_name(key->table, ref->second);
  }
  if (label.empty()) label = db.first_text_column(key->table);
  return label.empty() ? value : db.lookup(key->table, key->column, value, label);
}

json typed(const json& value, const json& spec) {
  if (value.is_null()) return value;
  const std::string type = spec.value("type", "TEXT");
  if (type == "BOOLEAN" && value.is_number()) return json(value.get<double>() != 0);
  return value;
}

}  // namespace

double oracle_draw(uint64_t seed, const std::string& text) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) / 9007199254740992.0;
}

json wrong_value(const OracleDatabase& db, const std::string& table, const std::string& column, const json& truth,
                 const json& spec, uint64_t draw) {
  if (truth.is_boolean()) return json(!truth.get<bool>());
  auto others = domain_of(db, spec);
  if (others.empty() && truth.is_string() && !column.empty()) {
    const auto& text = truth.get_ref<const std::string&>();
    const bool is_date = text.size() >= 10 && std::isdigit(static_cast<unsigned char>(text[0])) && text[4] == '-' &&
                         text[7] == '-';
    if (is_date) {
      const int year = std::stoi(text.substr(0, 4)) + 1 + static_cast<int>(draw % 5);
      return json(std::to_string(year) + text.substr(4));
    }
    others = db.distinct_texts(table, column);
  }
  if (truth.is_number_integer() && others.empty()) return json(truth.get<int64_t>() + 1 + static_cast<int64_t>(draw % 9));
  if (truth.is_number() && others.empty()) return json(truth.get<double>() * 1.07 + 1.0 + static_cast<double>(draw % 9));
  const std::string truth_text = to_lower(text_of(truth));
  for (size_t i = 0; i < others.size(); ++i) {
    const auto& candidate = others[(draw + i) % others.size()];
    if (to_lower(candidate) != truth_text) return json(candidate);
  }
  return json(text_of(truth) + " (unsure)");
}

json true_fill(const OracleDatabase& db, const std::string& table_in, const json& key, const json& spec) {
  const std::string table = db.table_name(table_in);
  if (table.empty() || !key.is_object()) return json();
  const std::string column = db.column_name(table, spec.value("name", ""));
  if (column.empty()) return json();
  const auto rows = db.rows_with(table, key);
  if (rows.empty()) return json();
  return typed(as_label(db, table, column, db.value(table, rows.front(), column), spec), spec);
}

json true_list(const OracleDatabase& db, const std::string& relation_in, const std::string& owner_in, const json& key,
               const json& spec) {
  const std::string relation = db.table_name(relation_in), owner = db.table_name(owner_in);
  if (relation.empty() || owner.empty() || !key.is_object()) return json();
  const auto rows = db.rows_with(owner, key);
  if (rows.empty()) return json();
  std::optional<std::pair<std::string, ForeignKey>> owner_key, target_key;
  std::string target_table;
  if (spec.contains("allowed_from"))
    if (const auto ref = parse_column_reference(spec["allowed_from"].get<std::string>())) target_table = ref->first;
  for (const auto& column : db.columns(relation)) {
    const auto fk = db.foreign_key(relation, column);
    if (!fk) continue;
    if (to_lower(fk->table) == to_lower(owner) && !owner_key) owner_key = {{column, *fk}};
    else if (to_lower(fk->table) == to_lower(target_table)) target_key = {{column, *fk}};
  }
  if (!owner_key || !target_key) return json();
  const auto ref = parse_column_reference(spec["allowed_from"].get<std::string>());
  const std::string label = db.column_name(target_key->second.table, ref->second);
  const json owner_id = db.value(owner, rows.front(), owner_key->second.column);
  SqliteStatement select(db.handle(),
                         "SELECT DISTINCT t." + quote_identifier(label) + " FROM " + quote_identifier(relation) +
                             " r JOIN " + quote_identifier(target_key->second.table) + " t ON r." +
                             quote_identifier(target_key->first) + " = t." +
                             quote_identifier(target_key->second.column) + " WHERE r." +
                             quote_identifier(owner_key->first) + " = ? AND t." + quote_identifier(label) +
                             " IS NOT NULL ORDER BY 1",
                         "oracle filler");
  bind_json(select.handle(), 1, owner_id);
  json out = json::array();
  while (select.step()) out.push_back(column_json(select.handle(), 0));
  return out;
}

}  // namespace relmem::evaluation
