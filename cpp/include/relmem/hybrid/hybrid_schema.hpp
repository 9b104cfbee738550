#pragma once
// What an LLM adds to a database for hybrid queries: virtual columns filled per row, relations listed per row, and
// small value tables restoring a dropped dimension. Declarations only; HybridSession makes them queryable.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace relmem::hybrid {

// Any: whatever scalar the LLM answers (SQL function results); lists of scalars become comma-separated text.
enum class FillType { Text, Integer, Real, Date, Boolean, Any };
FillType parse_fill_type(const std::string& name);  // SQL-ish names: TEXT, VARCHAR, INT, REAL, FLOAT, DATE, BOOL, ANY
std::string fill_type_name(FillType type);          // TEXT, INTEGER, REAL, DATE, BOOLEAN, ANY

// Where a categorical value must come from: the distinct values of a stored column, or a fixed list.
struct ValueDomain {
  std::string table;                // a stored column `table`.`column` of the same database, or empty
  std::string column;
  std::vector<std::string> values;  // a fixed list, or empty
  bool empty() const { return table.empty() && values.empty(); }
  bool operator==(const ValueDomain& other) const {
    return table == other.table && column == other.column && values == other.values;
  }
};

// A column holding the id of the row of `table` whose `label_column` the LLM names ("Blue" -> colour.id 7).
// `table` is a table of the database or one of the schema's value tables.
struct Reference {
  std::string table;
  std::string id_column;
  std::string label_column;
};

struct VirtualColumn {
  std::string name;
  FillType type = FillType::Text;  // of the LLM's answer; a reference column holds an INTEGER id instead
  std::string meaning;             // one line, shown to the LLM
  ValueDomain domain;              // constrains categorical answers; a reference implies its labels
  std::optional<Reference> reference;
};

// New columns of an existing table, filled by the LLM per row identified by `key_columns`.
struct VirtualTable {
  std::string table;
  std::vector<std::string> key_columns;  // empty: the primary key plus the most descriptive text columns
  std::vector<VirtualColumn> columns;
};

// A many-to-many relation the LLM lists per row of the owner table: the relation `name` has the columns
// (`owner_column`, `target_column`), one row (owner.id, target.id) per target label the LLM names for the owner.
struct VirtualRelation {
  std::string name;     // e.g. hero_power
  std::string meaning;  // e.g. "the super powers of the superhero"
  std::string owner_table, owner_id_column, owner_column;  // superhero, id, hero_id
  std::vector<std::string> key_columns;                    // of the owner table; empty: chosen as for tables
  std::string target_table, target_id_column, target_label_column, target_column;  // superpower, id, power_name, power_id
};

// A small fixed table restoring a dropped dimension: row i has id i + 1 and label values[i].
struct ValueTable {
  std::string name;
  std::string id_column = "id";
  std::string label_column;
  std::vector<std::string> values;
};

struct HybridSchema {
  std::vector<VirtualTable> tables;
  std::vector<VirtualRelation> relations;
  std::vector<ValueTable> value_tables;

  bool empty() const { return tables.empty() && relations.empty() && value_tables.empty(); }
  const ValueTable* value_table(const std::string& name) const;  // case-insensitive, nullptr when absent

  // {"tables": [{"table", "keys", "columns": [{"name", "type", "meaning", "values" | "values_from": "t.c",
  //   "references": {"table", "id", "label"}}]}], "relations": [...], "value_tables": [...]}.
  // Throws relmem::Error naming the field on malformed declarations.
  static HybridSchema from_json(const nlohmann::json& json);
  nlohmann::json to_json() const;
};

// "t.c", "t::c" or "`t`.`c`" -> {t, c}; nullopt when it is not a column reference.
std::optional<std::pair<std::string, std::string>> parse_column_reference(const std::string& text);

}  // namespace relmem::hybrid
