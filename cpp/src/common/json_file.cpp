#include "json_file.hpp"

#include <filesystem>
#include <fstream>

#include "relmem/common.hpp"

namespace relmem {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error("invalid JSON in " + path + ": " + e.what());
  }
}

std::optional<nlohmann::json> read_json_file_if_present(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  return read_json_file(path);
}

}  // namespace relmem
