#pragma once
// Private to hybrid/ and the evaluation tools above it: the messages of a fill request. The request itself travels
// as a JSON block, so any LLM (and the scripted oracle filler in evaluation/) reads the same structured payload.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/hybrid/filler.hpp"
#include "relmem/llm/chat.hpp"

namespace relmem::hybrid {

// {"task", "database", "table", "relation", "instruction", "key_columns", "answers": [{"name", "type", "list",
//  "meaning", "allowed" | "allowed_from"}], "items": [{"id": 1, "input": ...}]}. Rows identified by key columns
// travel compactly instead of as items: "rows": [[1, <key values in key_columns order>], ...].
nlohmann::json request_payload(const FillTask& task, const std::vector<const FillItem*>& items,
                               int max_shown_allowed);

// (id, input) of every item of a payload, in either form; rows become {key column: value} objects.
std::vector<std::pair<int, nlohmann::json>> payload_items(const nlohmann::json& payload);

std::vector<ChatMessage> request_messages(const nlohmann::json& payload);

// The payload of a request built by request_messages(); nullopt for any other request.
std::optional<nlohmann::json> find_request_payload(const std::vector<ChatMessage>& messages);

}  // namespace relmem::hybrid
