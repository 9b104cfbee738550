#pragma once
// The number a command-line flag's value spells, for the training executables.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace relmem_training {

// `text` as a T when all of it is one number of that kind; nullopt otherwise (the caller reports its usage error).
template <typename T>
std::optional<T> parse_number(const std::string& text) {
  try {
    size_t used = 0;
    T value;
    if constexpr (std::is_floating_point_v<T>) {
      value = static_cast<T>(std::stod(text, &used));
    } else {
      value = static_cast<T>(std::stoll(text, &used));
    }
    if (used != text.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace relmem_training
