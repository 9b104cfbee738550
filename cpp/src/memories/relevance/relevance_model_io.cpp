// Model file, little-endian:
//   "RMRM" | u32 version | u64 header bytes | header JSON | u64 parameter count | f32 parameters[count]
//   | u64 encoder top parameter count | f32 encoder top parameters[count]   (version >= 2; count 0 = frozen)
//   | u64 FNV-1a checksum of every byte before it.
// The header's "encoder_top" holds the fine-tuned layers' shape (null when the encoder is frozen). Version 3 added
// the header's "scalar_features" (15: with the column and value features; 17: with the untrained score too; 21:
// with the word-column and lexical-coverage interactions; 35: with the word lead and pool standing); earlier files have 11.
#include <nlohmann/json.hpp>

#include "../../common/checksummed_file.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"

namespace relmem {
namespace {

// Version 1 (no encoder top) and version 2 (no column and value features) files still load.
constexpr ChecksummedFormat kRelevanceModelFile{"relevance model", "RMRM", 1, 3, /*checksum_word_size=*/1};
constexpr const char* kFormat = "relmem-relevance-model";

void write_floats(ChecksummedFileWriter& file, const std::vector<float>& values) {
  file.write_values(static_cast<uint64_t>(values.size()));
  file.write(values.data(), values.size() * sizeof(float));
}

// A count and that many floats; `what` names them when the count is not the `expected` one of the header.
std::vector<float> read_floats(ChecksummedFileReader& file, int64_t expected, const std::string& what) {
  const auto count = file.read_value<uint64_t>();
  if (static_cast<int64_t>(count) != expected) {
    throw file.error("holds " + std::to_string(count) + " " + what + "; its header needs " + std::to_string(expected));
  }
  return file.read_array<float>(count);
}

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
                           {"version", kRelevanceModelFile.version},
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
  ChecksummedFileWriter file(kRelevanceModelFile, path);
  file.write_values(static_cast<uint64_t>(header_text.size()));
  file.write(header_text.data(), header_text.size());
  write_floats(file, parameters_.values());
  write_floats(file, encoder_top_.parameters());
  file.commit();
}

RelevanceModel RelevanceModel::load(const std::string& path) {
  ChecksummedFileReader file(kRelevanceModelFile, path);
  const std::vector<char> header_text = file.read_array<char>(file.read_value<uint64_t>());
  const auto header = nlohmann::json::parse(header_text.begin(), header_text.end(), nullptr, false);
  if (header.is_discarded() || !header.is_object() || header.value("format", "") != kFormat) {
    throw file.error("has a malformed header");
  }
  RelevanceConfig config;
  UseLiteTopShape top_shape;
  try {
    if (file.version() >= 2 && !header.at("encoder_top").is_null()) top_shape = top_shape_of(header.at("encoder_top"));
    config.input_dim = header.at("input_dim").get<int>();
    config.projection_dim = header.at("projection_dim").get<int>();
    config.hidden_dim = header.at("hidden_dim").get<int>();
    config.scalar_features = file.version() >= 3 ? header.at("scalar_features").get<int>()
                                                 : RelevanceConfig::kScalarFeaturesWithoutColumnsAndValues;
    config.encoder = header.at("encoder").get<std::string>();
    config.lexical_encoder = header.at("lexical_encoder").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw file.error(std::string("has a malformed header: ") + e.what());
  }
  config.validate();
  RelevanceParameters parameters(config);
  parameters.values() = read_floats(file, config.parameter_count(), "parameters");
  std::vector<float> top_values;
  if (file.version() >= 2) {
    top_shape.validate();
    top_values = read_floats(file, top_shape.parameter_count(), "encoder top parameters");
  }
  file.finish();
  RelevanceModel model(config, std::move(parameters));
  if (!top_shape.layers.empty()) model.set_encoder_top(UseLiteTop(std::move(top_shape), std::move(top_values)));
  model.set_threshold(header.value("threshold", 0.5f));
  if (header.contains("training")) model.set_training_info_json(header["training"].dump());
  return model;
}

}  // namespace relmem
