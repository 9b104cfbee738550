#pragma once
// Lexical encoder with no weights: hashed word unigrams/bigrams and character 3-5-grams (UTF-8 code points),
// sublinear tf weights, signed feature hashing, L2 normalization. Deterministic across runs and platforms.
#include "relmem/encoders/encoder.hpp"

namespace relmem {

class HashingEncoder : public Encoder {
 public:
  static constexpr int kDefaultDim = 512;
  explicit HashingEncoder(int dim = kDefaultDim);

  RowMatrix encode(const std::vector<std::string>& texts) const override;
  int dim() const override { return dim_; }
  std::string name() const override { return "hashing:" + std::to_string(dim_); }

  void encode_into(const std::string& text, float* out) const;

 private:
  int dim_;
};

}  // namespace relmem
