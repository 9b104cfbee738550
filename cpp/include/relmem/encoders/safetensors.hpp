#pragma once
// The safetensors format (Hugging Face): an 8-byte little-endian header length, a JSON header naming every tensor's
// dtype, shape and byte range, then the raw little-endian tensor bytes, contiguous and without holes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

struct TensorInfo {
  std::string dtype;  // "F32", "F16", "BF16", "I64", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte range inside the data section
  uint64_t end = 0;

  uint64_t element_count() const;
};

// Validates the whole layout on construction (header JSON, dtypes, shapes, offsets, file size) and reads tensor
// bytes on demand, so a large file is never held in memory twice. Every defect is a relmem::Error naming the file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return path_; }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  const TensorInfo& info(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // Values of an F32, F16, BF16 or F64 tensor as float, in row-major order.
  std::vector<float> read_floats(const std::string& name) const;
  // The tensor must have exactly the given shape.
  RowMatrix read_matrix(const std::string& name, int64_t rows, int64_t cols) const;
  Eigen::VectorXf read_vector(const std::string& name, int64_t size) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

struct TensorToWrite {
  std::string name;
  std::string dtype;  // F32, F16 or BF16; values are rounded to nearest even
  std::vector<int64_t> shape;
  std::vector<float> values;
};

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// IEEE half and bfloat16 conversions (round to nearest even on the way down).
float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace relmem
