#include "fill_prompts.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

constexpr const char* kOpen = "<request>\n";
constexpr const char* kClose = "\n</request>";

constexpr const char* kSystem =
    "You complete facts that a database lacks, from your own knowledge. You receive a request as JSON between "
    "<request> tags and answer with one JSON object only, no prose. Use null when you do not know a value; never "
    "guess wildly. Respect each answer's type (TEXT, INTEGER, REAL, DATE as YYYY-MM-DD, BOOLEAN as true/false) and, "
    "when \"allowed\" is given, answer only with one of its values exactly as written.";

std::string task_instruction(const std::string& kind) {
  if (kind == "fill")
    return "Each item is one row of the table, identified by its key columns. Give the value of every column in "
           "\"answers\" for every item. Reply as {\"1\": {\"<column>\": value, ...}, \"2\": {...}, ...}.";
  if (kind == "list")
    return "Each item is one row of the table, identified by its key columns. List every value related to it as "
           "the instruction says. Reply as {\"1\": [value, ...], \"2\": [...], ...} ([] when there is none).";
  if (kind == "match")
    return "For each item, give the allowed value that denotes the same thing as the item's input (as the "
           "instruction says), or null when none does. Reply as {\"1\": value, \"2\": value, ...}.";
  if (kind == "qa")
    return "Each item is a group of rows. Answer the instruction once per group, using the group's rows. Reply as "
           "{\"1\": answer, \"2\": answer, ...}.";
  return "For each item, apply the instruction to the item's input values. Reply as {\"1\": answer, \"2\": answer, "
         "...}; a yes/no question is answered true or false.";
}

}  // namespace

json request_payload(const FillTask& task, const std::vector<const FillItem*>& items, int max_shown_allowed) {
  json payload = {{"task", task.kind}, {"database", task.database}};
  if (!task.table.empty()) payload["table"] = task.table;
  if (!task.relation.empty()) payload["relation"] = task.relation;
  if (!task.instruction.empty()) payload["instruction"] = task.instruction;
  if (!task.key_columns.empty()) payload["key_columns"] = task.key_columns;
  payload["answers"] = json::array();
  for (const auto& spec : task.answers) {
    json answer = {{"name", spec.name}, {"type", fill_type_name(spec.type)}};
    if (spec.list) answer["list"] = true;
    if (!spec.meaning.empty()) answer["meaning"] = spec.meaning;
    if (!spec.allowed_from.empty()) answer["allowed_from"] = spec.allowed_from;
    if (!spec.allowed.empty() && static_cast<int>(spec.allowed.size()) <= max_shown_allowed)
      answer["allowed"] = spec.allowed;
    payload["answers"].push_back(answer);
  }
  payload["items"] = json::array();
  int id = 0;
  for (const auto* item : items) payload["items"].push_back({{"id", ++id}, {"input", item->shown}});
  return payload;
}

std::vector<ChatMessage> request_messages(const json& payload) {
  const std::string body = payload.dump(-1, ' ', false, json::error_handler_t::replace);
  return {{"system", kSystem},
          {"user", task_instruction(payload.value("task", "map")) + "\n" + kOpen + body + kClose}};
}

std::optional<json> find_request_payload(const std::vector<ChatMessage>& messages) {
  for (const auto& message : messages) {
    if (message.role != "user") continue;
    const size_t open = message.content.find(kOpen);
    const size_t close = message.content.rfind(kClose);
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    const size_t begin = open + std::char_traits<char>::length(kOpen);
    json parsed = json::parse(message.content.substr(begin, close - begin), nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("task")) return parsed;
  }
  return std::nullopt;
}

}  // namespace relmem::hybrid
