#include "relmem/encoders/tfjs_weights.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../common/json_file.hpp"
#include "relmem/common.hpp"

namespace relmem {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string read_file_bytes(const std::string& path, const std::string& hint) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("missing weight shard " + path + hint);
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(size)))
    throw Error("cannot read weight shard " + path + hint);
  return bytes;
}

}  // namespace

int64_t TfjsTensor::element_count() const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

TfjsWeights TfjsWeights::load(const std::string& model_dir, const std::string& hint) {
  TfjsWeights weights;
  weights.model_dir_ = model_dir;
  weights.hint_ = hint;
  const std::string manifest_path = (std::filesystem::path(model_dir) / "model.json").string();
  if (!std::filesystem::exists(manifest_path)) throw Error("missing " + manifest_path + hint);
  nlohmann::json model;
  try {
    model = read_json_file(manifest_path);
  } catch (const Error& e) {
    throw Error(e.what() + hint);
  }
  const auto corrupt = [&](const std::string& what) { return Error(manifest_path + ": " + what + hint); };
  if (!model.is_object() || !model.contains("weightsManifest") || !model["weightsManifest"].is_array()) {
    throw corrupt("no weightsManifest (not a TensorFlow.js graph model)");
  }
  try {
    for (const auto& group : model["weightsManifest"]) {
      std::string data;
      std::vector<std::string> paths;
      for (const auto& shard : group.at("paths")) {
        paths.push_back((std::filesystem::path(model_dir) / shard.get<std::string>()).string());
        data += read_file_bytes(paths.back(), hint);
      }
      std::size_t offset = 0;
      for (const auto& entry : group.at("weights")) {
        TfjsTensor tensor;
        const std::string name = entry.at("name").get<std::string>();
        tensor.dtype = entry.at("dtype").get<std::string>();
        tensor.shape = entry.at("shape").get<std::vector<int64_t>>();
        if (entry.contains("quantization")) throw corrupt("quantized weight " + name + " is not supported");
        if (tensor.dtype != "float32" && tensor.dtype != "int32") {
          throw corrupt("weight " + name + " has unsupported dtype " + tensor.dtype);
        }
        for (int64_t d : tensor.shape) {
          if (d < 0) throw corrupt("weight " + name + " has a negative dimension");
        }
        const auto count = static_cast<std::size_t>(tensor.element_count());
        const std::size_t bytes = count * 4;
        if (offset + bytes > data.size()) {
          throw Error("weight shards " + paths.front() + ".. are truncated: " + std::to_string(data.size()) +
                      " bytes, the manifest needs more (at " + name + ")" + hint);
        }
        if (tensor.dtype == "float32") {
          tensor.floats.resize(count);
          std::memcpy(tensor.floats.data(), data.data() + offset, bytes);
        } else {
          tensor.ints.resize(count);
          std::memcpy(tensor.ints.data(), data.data() + offset, bytes);
        }
        offset += bytes;
        weights.tensors_[name] = std::move(tensor);
      }
      if (offset != data.size()) {
        throw Error("weight shards " + paths.front() + ".. hold " + std::to_string(data.size()) +
                    " bytes but the manifest " + "describes " + std::to_string(offset) + hint);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw corrupt(std::string("malformed weightsManifest: ") + e.what());
  }
  return weights;
}

const TfjsTensor& TfjsWeights::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw Error(model_dir_ + "/model.json has no weight " + name + hint_);
  return it->second;
}

const std::vector<float>& TfjsWeights::floats(const std::string& name, const std::vector<int64_t>& shape) const {
  const TfjsTensor& t = tensor(name);
  if (t.dtype != "float32" || t.shape != shape) {
    throw Error(model_dir_ + "/model.json: weight " + name + " is " + t.dtype + shape_string(t.shape) +
                ", expected float32" + shape_string(shape) + hint_);
  }
  return t.floats;
}

double TfjsWeights::scalar(const std::string& name) const {
  const TfjsTensor& t = tensor(name);
  if (t.element_count() != 1) {
    throw Error(model_dir_ + "/model.json: weight " + name + " is not a scalar" + hint_);
  }
  return t.dtype == "float32" ? t.floats[0] : t.ints[0];
}

std::vector<std::string> TfjsWeights::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : tensors_) out.push_back(name);
  return out;
}

}  // namespace relmem
