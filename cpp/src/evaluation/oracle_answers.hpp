#pragma once
// Private to evaluation/: how the oracle filler answers each kind of request, and how it makes a value wrong.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "oracle_source.hpp"

namespace relmem::evaluation {

// A uniform number in [0, 1) fixed by the seed and the text.
double oracle_draw(uint64_t seed, const std::string& text);

// A plausible wrong value for `truth`: another allowed or stored value, a shifted number or date.
nlohmann::json wrong_value(const OracleDatabase& db, const std::string& table, const std::string& column,
                           const nlohmann::json& truth, const nlohmann::json& answer_spec, uint64_t draw);

// The true answer of a fill request for one row and one answer spec; null when the row or column is unknown.
nlohmann::json true_fill(const OracleDatabase& db, const std::string& table, const nlohmann::json& key,
                         const nlohmann::json& answer_spec);
// The true list of a relation for one owner row.
nlohmann::json true_list(const OracleDatabase& db, const std::string& relation, const std::string& owner_table,
                         const nlohmann::json& key, const nlohmann::json& answer_spec);
// The true answer of an SQL function call (map, match, qa) when its input identifies rows of a dropped column the
// instruction is about; nullopt when it does not.
std::optional<nlohmann::json> true_function_answer(const OracleDatabase& db, const std::string& kind,
                                                   const std::string& instruction, const nlohmann::json& input,
                                                   const nlohmann::json& answer_spec);

}  // namespace relmem::evaluation
