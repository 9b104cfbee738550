#pragma once
// Private to hybrid/: reading an LLM's answer leniently and checking each value against what was asked.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "relmem/hybrid/filler.hpp"

namespace relmem::hybrid {

// The first JSON object or array in `text`: code fences, prose around it and trailing commas are tolerated.
// nullopt when none can be read.
std::optional<nlohmann::json> parse_lenient_json(const std::string& text);

// The answers of an item-keyed reply: {"1": ..., "2": ...}, {"answers": {...}}, [{"id": 1, ...}, ...] or a bare
// list in item order; keys like "item 3" count as 3. Items absent from the reply are absent from the map.
std::unordered_map<int, nlohmann::json> answers_by_item(const nlohmann::json& reply, int item_count);

// The value `raw` checked against `spec`: converted to the declared type, matched to an allowed value
// (case-insensitively, returning its stored spelling). A JSON null or empty text is a valid "unknown" (null).
// Returns nullopt and sets `reason` when the value is unusable.
std::optional<nlohmann::json> check_answer(const nlohmann::json& raw, const AnswerSpec& spec, std::string& reason);

}  // namespace relmem::hybrid
