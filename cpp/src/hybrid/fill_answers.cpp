#include "fill_answers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include "text.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The end of the balanced bracket starting at `begin`, honouring JSON strings; npos when unbalanced.
size_t balanced_end(const std::string& text, size_t begin) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

std::optional<json> try_parse(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_discarded()) return parsed;
  static const std::regex trailing_comma(",(\\s*[}\\]])");
  parsed = json::parse(std::regex_replace(text, trailing_comma, "$1"), nullptr, false);
  if (!parsed.is_discarded()) return parsed;
  return std::nullopt;
}

std::optional<int> item_number(const std::string& key) {
  std::string digits;
  for (char c : key) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    else if (!digits.empty()) break;
  }
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  return std::stoi(digits);
}

std::optional<json> to_boolean(const json& raw) {
  if (raw.is_boolean()) return raw;
  if (raw.is_number_integer() && (raw.get<int64_t>() == 0 || raw.get<int64_t>() == 1)) return json(raw.get<int64_t>() == 1);
  if (raw.is_string()) {
    const std::string t = to_lower(trim(raw.get<std::string>()));
    if (t == "true" || t == "yes" || t == "y" || t == "1") return json(true);
    if (t == "false" || t == "no" || t == "n" || t == "0") return json(false);
  }
  return std::nullopt;
}

std::optional<double> to_number(const json& raw) {
  if (raw.is_number()) return raw.get<double>();
  if (!raw.is_string()) return std::nullopt;
  std::string t = trim(raw.get<std::string>());
  t.erase(std::remove(t.begin(), t.end(), ','), t.end());
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !std::isfinite(value)) return std::nullopt;
  static const std::regex unit("\\s*[a-zA-Z%]{0,4}\\s*");
  if (!trim(std::string(end)).empty() && !std::regex_match(std::string(end), unit))
    return std::nullopt;  // "180 cm" passes, "180 or 190" does not
  return value;
}

std::string number_text(const json& raw) {
  if (raw.is_number_integer()) return std::to_string(raw.get<int64_t>());
  if (raw.is_number_float()) {
    const double d = raw.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
    return raw.dump();
  }
  return raw.dump();
}

std::optional<json> to_type(const json& raw, FillType type, std::string& reason) {
  switch (type) {
    case FillType::Boolean: {
      if (auto b = to_boolean(raw)) return b;
      reason = "not a yes/no value: " + raw.dump();
      return std::nullopt;
    }
    case FillType::Integer: {  // as SQLite's INTEGER affinity: integral numbers become integers, others stay REAL
      const auto number = to_number(raw);
      if (number && std::floor(*number) == *number && std::fabs(*number) < 9e18) return json(static_cast<int64_t>(*number));
      if (number) return json(*number);
      reason = "not an integer: " + raw.dump();
      return std::nullopt;
    }
    case FillType::Real: {
      if (const auto number = to_number(raw)) return json(*number);
      reason = "not a number: " + raw.dump();
      return std::nullopt;
    }
    case FillType::Date: {
      static const std::regex date("\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?)?");
      if (raw.is_string() && std::regex_match(trim(raw.get<std::string>()), date)) return json(trim(raw.get<std::string>()));
      reason = "not a date (YYYY-MM-DD): " + raw.dump();
      return std::nullopt;
    }
    case FillType::Any:
      if (raw.is_boolean() || raw.is_number()) return raw;
      if (raw.is_array()) {  // a list answer to a scalar question: its elements as comma-separated text
        std::string joined;
        for (const auto& element : raw) {
          if (!element.is_string() && !element.is_number()) {
            reason = "not a list of values: " + raw.dump();
            return std::nullopt;
          }
          joined += (joined.empty() ? "" : ", ") + (element.is_string() ? element.get<std::string>() : number_text(element));
        }
        return json(joined);
      }
      [[fallthrough]];
    case FillType::Text:
      if (raw.is_string()) return raw;  // as written: stored text keeps its spaces too
      if (raw.is_number()) return json(number_text(raw));
      if (raw.is_boolean()) return json(raw.get<bool>() ? "true" : "false");
      reason = "not a text value: " + raw.dump();
      return std::nullopt;
  }
  return std::nullopt;
}

bool is_unknown(const json& raw) {
  return raw.is_null() || (raw.is_string() && trim(raw.get<std::string>()).empty());
}

// null is "unknown"; empty text is a text value (as databases store it) unless the allowed values exclude it.
std::optional<json> check_scalar(const json& raw, const AnswerSpec& spec, std::string& reason) {
  if (raw.is_null()) return json();
  if (is_unknown(raw)) {
    const bool text = spec.type == FillType::Text || spec.type == FillType::Any;
    const bool allowed = spec.allowed.empty() || std::find(spec.allowed.begin(), spec.allowed.end(), "") != spec.allowed.end();
    return text && allowed ? json("") : json();
  }
  if (spec.type == FillType::Any && raw.is_array() && !spec.allowed.empty()) {  // each element must be allowed
    AnswerSpec element = spec;
    element.list = true;
    json checked = check_answer(raw, element, reason).value_or(json::array());
    return to_type(checked, FillType::Any, reason);
  }
  auto value = to_type(raw, spec.type, reason);
  if (!value || spec.allowed.empty()) return value;
  const std::string wanted = to_lower(trim(value->is_string() ? value->get<std::string>() : number_text(*value)));
  for (const auto& allowed : spec.allowed)
    if (to_lower(trim(allowed)) == wanted) return value->is_string() ? json(allowed) : *value;
  reason = "not an allowed value: " + raw.dump();
  return std::nullopt;
}

}  // namespace

std::optional<json> parse_lenient_json(const std::string& text) {
  if (auto whole = try_parse(trim(text))) {
    if (whole->is_object() || whole->is_array()) return whole;
  }
  for (size_t begin = text.find_first_of("{["); begin != std::string::npos;
       begin = text.find_first_of("{[", begin + 1)) {
    const size_t end = balanced_end(text, begin);
    if (end == std::string::npos) continue;
    if (auto parsed = try_parse(text.substr(begin, end - begin + 1))) return parsed;
  }
  return std::nullopt;
}

std::unordered_map<int, json> answers_by_item(const json& reply_in, int item_count) {
  std::unordered_map<int, json> out;
  const json* reply = &reply_in;
  for (const char* wrapper : {"answers", "answer", "items", "results", "rows"}) {
    if (reply->is_object() && reply->size() == 1 && reply->contains(wrapper)) reply = &(*reply)[wrapper];
  }
  if (reply->is_object()) {
    for (auto it = reply->begin(); it != reply->end(); ++it) {
      const auto number = item_number(it.key());
      if (number && *number >= 1 && *number <= item_count) out[*number] = it.value();
    }
  } else if (reply->is_array()) {
    const bool with_ids = std::all_of(reply->begin(), reply->end(), [](const json& e) {
      return e.is_object() && e.contains("id") && (e["id"].is_number_integer() || e["id"].is_string());
    });
    int position = 0;
    for (const auto& element : *reply) {
      ++position;
      if (!with_ids) {
        if (position <= item_count) out[position] = element;
        continue;
      }
      const auto number = element["id"].is_string() ? item_number(element["id"].get<std::string>())
                                                    : std::optional<int>(element["id"].get<int>());
      if (!number || *number < 1 || *number > item_count) continue;
      json rest = element;
      rest.erase("id");
      out[*number] = rest.size() == 1 && rest.contains("answer") ? rest["answer"] : rest;
    }
  }
  return out;
}

std::optional<json> check_answer(const json& raw, const AnswerSpec& spec, std::string& reason) {
  if (!spec.list) return check_scalar(raw, spec, reason);
  if (is_unknown(raw)) return json::array();
  json items = raw;
  if (raw.is_string()) {  // "Flight, Agility" as the text of a list
    items = json::array();
    std::string text = raw.get<std::string>(), part;
    for (char c : text + ",") {
      if (c == ',' || c == ';') {
        if (!trim(part).empty()) items.push_back(trim(part));
        part.clear();
      } else {
        part += c;
      }
    }
  }
  if (!items.is_array()) {
    reason = "not a list: " + raw.dump();
    return std::nullopt;
  }
  json out = json::array();
  for (const auto& item : items) {
    std::string item_reason;
    const auto value = check_scalar(item, spec, item_reason);
    if (!value) {
      reason = item_reason;  // a wrong element is dropped, the rest of the list kept
      continue;
    }
    if (!value->is_null() && std::find(out.begin(), out.end(), *value) == out.end()) out.push_back(*value);
  }
  return out;
}

}  // namespace relmem::hybrid
