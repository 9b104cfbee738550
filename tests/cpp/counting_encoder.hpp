#pragma once
// The hashing encoder, counting its calls and the texts they encode: for tests of what is encoded, and how often.
#include <cstddef>
#include <string>
#include <vector>

#include "relmem/encoders/hashing_encoder.hpp"

namespace relmem_test {

class CountingEncoder : public relmem::Encoder {
 public:
  relmem::RowMatrix encode(const std::vector<std::string>& texts) const override {
    ++calls;
    encoded += texts.size();
    return inner.encode(texts);
  }
  int dim() const override { return inner.dim(); }
  std::string name() const override { return inner.name(); }
  mutable size_t calls = 0, encoded = 0;

 private:
  relmem::HashingEncoder inner{256};
};

}  // namespace relmem_test
