#include "relmem/encoders/model_home.hpp"

#include <cstdlib>
#include <filesystem>

namespace relmem {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string relmem_home() {
  const std::string home = environment("RELMEM_HOME");
  if (!home.empty()) return home;
  const std::string user_home = environment("HOME");
  return user_home.empty() ? "" : user_home + "/.cache/relmem";
}

std::vector<std::string> use_lite_search_path() {
  std::vector<std::string> folders;
  if (!environment("RELMEM_USE_LITE_DIR").empty()) folders.push_back(environment("RELMEM_USE_LITE_DIR"));
  const std::string home = relmem_home();
  if (!home.empty()) folders.push_back(home + "/models/use-lite");
  return folders;
}

std::string find_use_lite_dir() {
  for (const auto& folder : use_lite_search_path()) {
    if (std::filesystem::exists(std::filesystem::path(folder) / "model.json")) return folder;
  }
  return "";
}

std::string find_installed_model_dir(const std::string& name) {
  const std::string home = relmem_home();
  if (home.empty()) return "";
  const std::filesystem::path folder = std::filesystem::path(home) / "models" / name;
  return std::filesystem::exists(folder / "INSTALLED") ? folder.string() : "";
}

}  // namespace relmem
