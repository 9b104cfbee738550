#pragma once
// Sentence encoder interface: a list of texts in, one L2-normalized row per text out.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual RowMatrix encode(const std::vector<std::string>& texts) const = 0;
  virtual int dim() const = 0;
  virtual std::string name() const = 0;
};

// A spec is "name" or "name:argument", e.g. "hashing:1024", "use-lite", "use-lite:/models/use-lite",
// "bert:/path/to/model_dir". The factory receives the argument (empty when absent).
using EncoderFactory = std::function<std::unique_ptr<Encoder>(const std::string& argument)>;

void register_encoder(const std::string& name, EncoderFactory factory);
std::unique_ptr<Encoder> load_encoder(const std::string& spec);
std::vector<std::string> registered_encoders();

}  // namespace relmem
