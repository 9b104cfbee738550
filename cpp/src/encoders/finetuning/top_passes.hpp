#pragma once
// Private to encoders/finetuning/: what the files that define an encoder top's passes share: the flat parameter
// layout's reader, and the float (serving, training) and double (gradient checks) instances of the passes.
#include <cstdint>
#include <vector>

#include "relmem/encoders/finetuning/transformer_backprop.hpp"

namespace relmem {

// Hands out consecutive tensors of a flat parameter (or gradient) buffer: take(n) is the next n values.
template <typename P>
class FlatTensors {
 public:
  explicit FlatTensors(P base) : next_(base) {}
  P take(int64_t count) {
    P at = next_;
    next_ += count;
    return at;
  }
  P end() const { return next_; }

 private:
  P next_;
};

}  // namespace relmem

#define RELMEM_INSTANTIATE_TOP_PASSES(TopShape, S)                                                                \
  template backprop::Matrix<S> top_forward<S>(const TopShape&, const S*, const backprop::Matrix<S>&,              \
                                              const std::vector<int>&, TopShape::Cache<S>&);                     \
  template backprop::Matrix<S> top_backward<S>(const TopShape&, const S*, const TopShape::Cache<S>&,              \
                                               const backprop::Matrix<S>&, S*);
