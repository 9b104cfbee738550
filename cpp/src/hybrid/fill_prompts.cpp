#include "fill_prompts.hpp"

#include <algorithm>
#include <iterator>

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

constexpr const char* kRows =
    "Each entry of \"rows\" is one row of the table: its id, then the values of \"key_columns\" in that order. ";

std::string task_instruction(const std::string& kind, size_t answers) {
  if (kind == "fill" && answers == 1)
    return std::string(kRows) + "Give the value of the column in \"answers\" for every row. Reply as "
           "{\"1\": value, \"2\": value, ...}.";
  if (kind == "fill")
    return std::string(kRows) + "Give the value of every column in \"answers\" for every row. Reply as "
           "{\"1\": {\"<column>\": value, ...}, \"2\": {...}, ...}.";
  if (kind == "list")
    return std::string(kRows) + "List every value related to each row as the instruction says. Reply as "
           "{\"1\": [value, ...], \"2\": [...], ...} ([] when there is none).";
  if (kind == "match")
    return "For each item, give the allowed value that denotes the same thing as the item's input (as the "
           "instruction says), or null when none does. Reply as {\"1\": value, \"2\": value, ...}.";
  if (kind == "qa")
    return "Each item is a group of rows. Answer the instruction once per group, using the group's rows. Reply as "
           "{\"1\": answer, \"2\": answer, ...}.";
  return "For each item, apply the instruction to the item's input values. Reply as {\"1\": answer, \"2\": answer, "
         "...}; a yes/no question is answered true or false.";
}

// The request's fields in reading order: what is asked about first, the answers' specification last, next to where
// the reply starts. A small model answers from the last thing it read: with the answers before the rows (JSON's
// sorted order) the 1.5B default model replied with the column's name or a row's key for most rows
// (docs/hybrid.md, 2026-12-08).
std::string request_body(const json& payload) {
  static const char* const kOrder[] = {"task", "database", "table", "relation", "instruction", "key_columns",
                                       "rows", "items", "answers"};
  std::string body = "{";
  const auto append = [&](const std::string& key, const json& value) {
    if (body.size() > 1) body += ',';
    body += json(key).dump() + ':' + value.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  for (const char* key : kOrder)
    if (payload.contains(key)) append(key, payload.at(key));
  for (const auto& [key, value] : payload.items())
    if (std::find(std::begin(kOrder), std::end(kOrder), key) == std::end(kOrder)) append(key, value);
  return body + '}';
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
  int id = 0;
  if (!task.key_columns.empty()) {
    payload["rows"] = json::array();
    for (const auto* item : items) {
      json row = json::array({++id});
      for (const auto& column : task.key_columns) row.push_back(item->shown.value(column, json()));
      payload["rows"].push_back(std::move(row));
    }
    return payload;
  }
  payload["items"] = json::array();
  for (const auto* item : items) payload["items"].push_back({{"id", ++id}, {"input", item->shown}});
  return payload;
}

std::vector<std::pair<int, json>> payload_items(const json& payload) {
  std::vector<std::pair<int, json>> out;
  if (payload.contains("rows")) {
    const auto& columns = payload.at("key_columns");
    for (const auto& row : payload.at("rows")) {
      json input = json::object();
      for (size_t i = 0; i < columns.size() && i + 1 < row.size(); ++i)
        input[columns[i].get<std::string>()] = row[i + 1];
      out.emplace_back(row.at(0).get<int>(), std::move(input));
    }
    return out;
  }
  for (const auto& item : payload.at("items")) out.emplace_back(item.at("id").get<int>(), item.at("input"));
  return out;
}

std::vector<ChatMessage> request_messages(const json& payload) {
  const std::string body = request_body(payload);
  return {{"system", kSystem},
          {"user", task_instruction(payload.value("task", "map"), payload.value("answers", json::array()).size()) +
                       "\n" + kOpen + body + kClose}};
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
