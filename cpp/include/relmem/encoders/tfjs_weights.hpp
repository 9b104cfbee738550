#pragma once
// Weights of a TensorFlow.js graph model directory: model.json's weightsManifest names every tensor (dtype, shape) in
// the order its bytes follow one another through each group's shard files (little-endian, no gaps).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace relmem {

struct TfjsTensor {
  std::string dtype;  // "float32" or "int32"
  std::vector<int64_t> shape;
  std::vector<float> floats;  // float32 tensors
  std::vector<int32_t> ints;  // int32 tensors

  int64_t element_count() const;
};

class TfjsWeights {
 public:
  // Reads and checks everything: model.json, each shard's presence and the exact byte count of every group.
  // Every defect is a relmem::Error naming the file; `hint` is appended (e.g. how to reinstall the model).
  static TfjsWeights load(const std::string& model_dir, const std::string& hint = "");

  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // The tensor must exist, be float32 and have exactly this shape.
  const std::vector<float>& floats(const std::string& name, const std::vector<int64_t>& shape) const;
  // A scalar or one-element float32/int32 constant.
  double scalar(const std::string& name) const;
  const TfjsTensor& tensor(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::string model_dir_;
  std::string hint_;
  std::map<std::string, TfjsTensor> tensors_;
};

}  // namespace relmem
