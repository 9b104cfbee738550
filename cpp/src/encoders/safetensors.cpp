#include "relmem/encoders/safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <tuple>
#include <nlohmann/json.hpp>

#include "../common/new_file.hpp"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

namespace relmem {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the limit of the reference implementation

uint64_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

uint64_t checked_multiply(uint64_t a, uint64_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) throw Error(what + ": size overflows");
  return a * b;
}

TensorInfo parse_tensor(const std::string& name, const nlohmann::json& entry, const std::string& where) {
  const std::string what = where + ": tensor '" + name + "'";
  if (!entry.is_object()) throw Error(what + " is not a JSON object");
  TensorInfo info;
  if (!entry.contains("dtype") || !entry["dtype"].is_string()) throw Error(what + " has no dtype string");
  info.dtype = entry["dtype"].get<std::string>();
  const uint64_t element_size = dtype_size(info.dtype);
  if (element_size == 0) throw Error(what + " has unknown dtype '" + info.dtype + "'");
  if (!entry.contains("shape") || !entry["shape"].is_array()) throw Error(what + " has no shape array");
  for (const auto& dim : entry["shape"]) {
    if (!dim.is_number_unsigned()) throw Error(what + " has a shape entry that is not a non-negative integer");
    info.shape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
  }
  const auto& offsets = entry.contains("data_offsets") ? entry["data_offsets"] : nlohmann::json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    throw Error(what + " needs data_offsets [begin, end] of non-negative integers");
  }
  info.begin = offsets[0].get<uint64_t>();
  info.end = offsets[1].get<uint64_t>();
  if (info.end < info.begin) throw Error(what + " has data_offsets with end before begin");
  uint64_t bytes = element_size;
  for (int64_t dim : info.shape) bytes = checked_multiply(bytes, static_cast<uint64_t>(dim), what);
  if (info.end - info.begin != bytes) {
    throw Error(what + " (" + info.dtype + " " + shape_text(info.shape) + ") needs " + std::to_string(bytes) +
                " bytes but data_offsets span " + std::to_string(info.end - info.begin));
  }
  return info;
}

}  // namespace

uint64_t TensorInfo::element_count() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot read safetensors file " + path + ": " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open safetensors file " + path);
  if (file_size < 8) throw Error(path + ": too small for a safetensors file (" + std::to_string(file_size) + " bytes)");
  unsigned char length_bytes[8];
  in.read(reinterpret_cast<char*>(length_bytes), 8);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length_bytes[i];
  if (header_size > kMaxHeaderBytes) {
    throw Error(path + ": header length " + std::to_string(header_size) + " is too large");
  }
  if (header_size > file_size - 8) {
    throw Error(path + ": header length " + std::to_string(header_size) + " runs past the end of the file");
  }
  std::string header(header_size, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_size))) throw Error(path + ": cannot read header");
  if (header.empty() || header.front() != '{') throw Error(path + ": header does not start with a JSON object");

  nlohmann::json json;
  try {
    json = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": header is not valid JSON: " + e.what());
  }
  if (!json.is_object()) throw Error(path + ": header is not a JSON object");
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw Error(path + ": __metadata__ is not a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) throw Error(path + ": __metadata__ value '" + key + "' is not a string");
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    tensors_[name] = parse_tensor(name, entry, path);
  }

  // The tensors must tile the data section exactly, in offset order.
  data_start_ = 8 + header_size;
  const uint64_t data_size = file_size - data_start_;
  std::vector<const std::pair<const std::string, TensorInfo>*> ordered;
  for (const auto& entry : tensors_) ordered.push_back(&entry);
  std::sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) {
    return std::tie(a->second.begin, a->second.end) < std::tie(b->second.begin, b->second.end);
  });
  uint64_t expected_begin = 0;
  for (const auto* entry : ordered) {
    if (entry->second.begin != expected_begin) {
      throw Error(path + ": tensor '" + entry->first + "' starts at byte " + std::to_string(entry->second.begin) +
                  " of the data section, expected " + std::to_string(expected_begin) +
                  " (tensors overlap or leave a gap)");
    }
    expected_begin = entry->second.end;
  }
  if (expected_begin != data_size) {
    throw Error(path + ": tensors cover " + std::to_string(expected_begin) + " data bytes but the file holds " +
                std::to_string(data_size) + " (truncated or trailing bytes)");
  }
}

const TensorInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw Error(path_ + ": no tensor named '" + name + "'");
  return it->second;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> names;
  for (const auto& [name, _] : tensors_) names.push_back(name);
  return names;
}

std::vector<float> SafetensorsFile::read_floats(const std::string& name) const {
  const TensorInfo& tensor = info(name);
  const uint64_t count = tensor.element_count();
  const std::string& dtype = tensor.dtype;
  if (dtype != "F32" && dtype != "F16" && dtype != "BF16" && dtype != "F64") {
    throw Error(path_ + ": tensor '" + name + "' has dtype " + dtype + ", expected F32, F16, BF16 or F64");
  }
  std::string bytes(tensor.end - tensor.begin, '\0');
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(data_start_ + tensor.begin));
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw Error(path_ + ": cannot read the bytes of tensor '" + name + "' (file changed or unreadable)");
  }
  std::vector<float> values(count);
  const char* data = bytes.data();
  if (dtype == "F32") {
    std::memcpy(values.data(), data, bytes.size());
  } else if (dtype == "F64") {
    for (uint64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      values[i] = static_cast<float>(v);
    }
  } else {
    const bool half = dtype == "F16";
    for (uint64_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, data + 2 * i, 2);
      values[i] = half ? half_to_float(bits) : bfloat16_to_float(bits);
    }
  }
  return values;
}

RowMatrix SafetensorsFile::read_matrix(const std::string& name, int64_t rows, int64_t cols) const {
  const TensorInfo& tensor = info(name);
  if (tensor.shape != std::vector<int64_t>{rows, cols}) {
    throw Error(path_ + ": tensor '" + name + "' has shape " + shape_text(tensor.shape) + ", expected " +
                shape_text({rows, cols}));
  }
  const std::vector<float> values = read_floats(name);
  return Eigen::Map<const RowMatrix>(values.data(), rows, cols);
}

Eigen::VectorXf SafetensorsFile::read_vector(const std::string& name, int64_t size) const {
  const TensorInfo& tensor = info(name);
  if (tensor.shape != std::vector<int64_t>{size}) {
    throw Error(path_ + ": tensor '" + name + "' has shape " + shape_text(tensor.shape) + ", expected " +
                shape_text({size}));
  }
  const std::vector<float> values = read_floats(name);
  return Eigen::Map<const Eigen::VectorXf>(values.data(), size);
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string data;
  for (const auto& tensor : tensors) {
    uint64_t count = 1;
    for (int64_t dim : tensor.shape) {
      if (dim < 0) throw Error("tensor '" + tensor.name + "' has a negative dimension");
      count *= static_cast<uint64_t>(dim);
    }
    if (count != tensor.values.size()) {
      throw Error("tensor '" + tensor.name + "' has " + std::to_string(tensor.values.size()) +
                  " values for shape " + shape_text(tensor.shape));
    }
    if (header.contains(tensor.name) || tensor.name == "__metadata__") {
      throw Error("tensor name '" + tensor.name + "' is used twice or reserved");
    }
    const uint64_t begin = data.size();
    if (tensor.dtype == "F32") {
      data.append(reinterpret_cast<const char*>(tensor.values.data()), tensor.values.size() * sizeof(float));
    } else if (tensor.dtype == "F16" || tensor.dtype == "BF16") {
      const bool half = tensor.dtype == "F16";
      for (float v : tensor.values) {
        const uint16_t bits = half ? float_to_half(v) : float_to_bfloat16(v);
        data.append(reinterpret_cast<const char*>(&bits), 2);
      }
    } else {
      throw Error("cannot write tensor '" + tensor.name + "' as " + tensor.dtype + " (F32, F16 or BF16 only)");
    }
    header[tensor.name] = {{"dtype", tensor.dtype}, {"shape", tensor.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
  unsigned char length_bytes[8];
  for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<unsigned char>(uint64_t{header_text.size()} >> (8 * i));
  write_file_atomically(path, std::string(reinterpret_cast<const char*>(length_bytes), 8) + header_text + data,
                        "safetensors");
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1F;
  const uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
    return sign ? -magnitude : magnitude;
  }
  const uint32_t out = exponent == 31 ? sign | 0x7F800000u | (mantissa << 13)
                                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &out, 4);
  return value;
}

uint16_t float_to_half(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) return sign | 0x7E00;      // NaN
  if (magnitude >= 0x477FF000) return sign | 0x7C00;     // rounds to infinity (also +-inf itself)
  if (magnitude < 0x38800000) {                          // below the smallest normal half: count units of 2^-24
    float abs_value;
    std::memcpy(&abs_value, &magnitude, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(abs_value * 16777216.0f));
  }
  magnitude += 0xFFF + ((magnitude >> 13) & 1);  // round to nearest even on the 13 dropped bits
  return sign | static_cast<uint16_t>((magnitude - 0x38000000) >> 13);
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t out = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &out, 4);
  return value;
}

uint16_t float_to_bfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace relmem
