#pragma once
// Reading small JSON files: model configurations, saved memories' side files.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace relmem {

// Throws relmem::Error naming the file when it is missing or not valid JSON.
nlohmann::json read_json_file(const std::string& path);
// std::nullopt when the file does not exist; relmem::Error when it exists but is not valid JSON.
std::optional<nlohmann::json> read_json_file_if_present(const std::string& path);

}  // namespace relmem
