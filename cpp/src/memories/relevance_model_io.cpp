// Model file, little-endian:
//   "RMRM" | u32 version | u64 header bytes | header JSON | u64 parameter count | f32 parameters[count]
//   | u64 encoder top parameter count | f32 encoder top parameters[count]   (version >= 2; count 0 = frozen)
// Version 3 added the header's "scalar_features" (15: with the column and value features); earlier files have 11.
//   | u64 FNV-1a checksum of every byte before it.
// The header's "encoder_top" holds the fine-tuned layers' shape (null when the encoder is frozen).
#include <cstring>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "relmem/memories/relevance_model.hpp"

namespace relmem {
namespace {

constexpr char kMagic[4] = {'R', 'M', 'R', 'M'};
constexpr uint32_t kVersion = 3;
constexpr uint32_t kFirstVersion = 1;  // no encoder top
constexpr const char* kFormat = "relmem-relevance-model";

uint64_t fnv1a(const char* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<uint8_t>(data[i])) * 0x100000001b3ULL;
  return hash;
}

template <typename T>
void append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  template <typename T>
  T read() {
    T value;
    std::memcpy(&value, take(sizeof value), sizeof value);
    return value;
  }
  const char* take(size_t size) {
    if (size > bytes_.size() - offset_) throw Error("relevance model file " + path_ + " is truncated");
    const char* at = bytes_.data() + offset_;
    offset_ += size;
    return at;
  }
  size_t offset() const { return offset_; }

 private:
  const std::string& bytes_;
  const std::string& path_;
  size_t offset_ = 0;
};

nlohmann::json top_shape_json(const UseLiteTop& top) {
  if (top.empty()) return nullptr;
  const UseLiteTopShape& shape = top.shape();
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : shape.layers) {
    layers.push_back({{"input_width", l.input_width},
                      {"width", l.width},
                      {"heads", l.heads},
                      {"head_width", l.head_width},
                      {"hidden", l.hidden},
                      {"attention_scale", l.attention_scale}});
  }
  return {{"layers", layers},
          {"output_width", shape.output_width},
          {"norm_epsilon", shape.norm_epsilon},
          {"l2_epsilon", shape.l2_epsilon}};
}

UseLiteTopShape top_shape_of(const nlohmann::json& json) {
  UseLiteTopShape shape;
  for (const auto& l : json.at("layers")) {
    shape.layers.push_back({l.at("input_width").get<int>(), l.at("width").get<int>(), l.at("heads").get<int>(),
                            l.at("head_width").get<int>(), l.at("hidden").get<int>(),
                            l.at("attention_scale").get<float>()});
  }
  shape.output_width = json.at("output_width").get<int>();
  shape.norm_epsilon = json.at("norm_epsilon").get<float>();
  shape.l2_epsilon = json.at("l2_epsilon").get<float>();
  return shape;
}

}  // namespace

void RelevanceModel::save(const std::string& path) const {
  nlohmann::json header = {{"format", kFormat},
                           {"version", kVersion},
                           {"input_dim", config_.input_dim},
                           {"projection_dim", config_.projection_dim},
                           {"hidden_dim", config_.hidden_dim},
                           {"scalar_features", config_.scalar_features},
                           {"encoder", config_.encoder},
                           {"lexical_encoder", config_.lexical_encoder},
                           {"threshold", threshold_},
                           {"encoder_top", top_shape_json(encoder_top_)},
                           {"training", nlohmann::json::parse(training_info_json_, nullptr, false)}};
  if (header["training"].is_discarded()) header["training"] = nlohmann::json::object();
  const std::string header_text = header.dump();
  std::string bytes(kMagic, sizeof kMagic);
  append(bytes, kVersion);
  append(bytes, static_cast<uint64_t>(header_text.size()));
  bytes += header_text;
  const auto& values = parameters_.values();
  append(bytes, static_cast<uint64_t>(values.size()));
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  const auto& top = encoder_top_.parameters();
  append(bytes, static_cast<uint64_t>(top.size()));
  bytes.append(reinterpret_cast<const char*>(top.data()), top.size() * sizeof(float));
  append(bytes, fnv1a(bytes.data(), bytes.size()));

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write relevance model file " + path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("failed writing relevance model file " + path);
}

RelevanceModel RelevanceModel::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open relevance model file " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reader reader(bytes, path);
  if (bytes.size() < sizeof kMagic || std::memcmp(reader.take(sizeof kMagic), kMagic, sizeof kMagic) != 0) {
    throw Error(path + " is not a relmem relevance model file (bad magic)");
  }
  const auto version = reader.read<uint32_t>();
  if (version < kFirstVersion || version > kVersion) {
    throw Error("relevance model file " + path + " has format version " + std::to_string(version) +
                "; this relmem reads versions " + std::to_string(kFirstVersion) + " to " + std::to_string(kVersion));
  }
  if (bytes.size() < sizeof(uint64_t) ||
      fnv1a(bytes.data(), bytes.size() - sizeof(uint64_t)) !=
          [&] {
            uint64_t stored;
            std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
            return stored;
          }()) {
    throw Error("relevance model file " + path + " is corrupt (checksum mismatch)");
  }
  const auto header_size = reader.read<uint64_t>();
  if (header_size > bytes.size()) throw Error("relevance model file " + path + " is truncated");
  const char* header_bytes = reader.take(static_cast<size_t>(header_size));
  const auto header = nlohmann::json::parse(header_bytes, header_bytes + header_size, nullptr, false);
  if (header.is_discarded() || !header.is_object() || header.value("format", "") != kFormat) {
    throw Error("relevance model file " + path + " has a malformed header");
  }
  RelevanceConfig config;
  UseLiteTopShape top_shape;
  try {
    if (version >= 2 && !header.at("encoder_top").is_null()) top_shape = top_shape_of(header.at("encoder_top"));
    config.input_dim = header.at("input_dim").get<int>();
    config.projection_dim = header.at("projection_dim").get<int>();
    config.hidden_dim = header.at("hidden_dim").get<int>();
    config.scalar_features = version >= 3 ? header.at("scalar_features").get<int>()
                                          : RelevanceConfig::kScalarFeaturesWithoutColumnsAndValues;
    config.encoder = header.at("encoder").get<std::string>();
    config.lexical_encoder = header.at("lexical_encoder").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error("relevance model file " + path + " has a malformed header: " + e.what());
  }
  config.validate();
  const auto count = reader.read<uint64_t>();
  if (static_cast<int64_t>(count) != config.parameter_count()) {
    throw Error("relevance model file " + path + " holds " + std::to_string(count) + " parameters; its header needs " +
                std::to_string(config.parameter_count()));
  }
  if (count > bytes.size() / sizeof(float)) throw Error("relevance model file " + path + " is truncated");
  const char* values = reader.take(count * sizeof(float));
  RelevanceParameters parameters(config);
  std::memcpy(parameters.values().data(), values, count * sizeof(float));
  std::vector<float> top_values;
  if (version >= 2) {
    top_shape.validate();
    const auto top_count = reader.read<uint64_t>();
    if (static_cast<int64_t>(top_count) != top_shape.parameter_count()) {
      throw Error("relevance model file " + path + " holds " + std::to_string(top_count) +
                  " encoder top parameters; its header needs " + std::to_string(top_shape.parameter_count()));
    }
    if (top_count > bytes.size() / sizeof(float)) throw Error("relevance model file " + path + " is truncated");
    top_values.resize(static_cast<size_t>(top_count));
    std::memcpy(top_values.data(), reader.take(top_count * sizeof(float)), top_count * sizeof(float));
  }
  if (reader.offset() + sizeof(uint64_t) != bytes.size()) {
    throw Error("relevance model file " + path + " has trailing bytes");
  }
  RelevanceModel model(config, std::move(parameters));
  if (!top_shape.layers.empty()) model.set_encoder_top(UseLiteTop(std::move(top_shape), std::move(top_values)));
  model.set_threshold(header.value("threshold", 0.5f));
  if (header.contains("training")) model.set_training_info_json(header["training"].dump());
  return model;
}

}  // namespace relmem
