#pragma once
// Private to hybrid/: small text helpers shared by the hybrid sources and the oracle filler in evaluation/.
#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

#include "../common/ascii_case.hpp"  // to_lower, to_upper

namespace relmem::hybrid {

// A scalar as the text a database or an LLM would write: strings as they are, integers without a decimal point.
inline std::string text_of(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_null()) return "";
  return value.dump();
}

}  // namespace relmem::hybrid
