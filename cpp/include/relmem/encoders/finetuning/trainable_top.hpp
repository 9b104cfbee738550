#pragma once
// The trainable top of an encoder: its top layer(s) and sentence head as flat parameters, forward and backward over
// the token states the frozen layers below produce, and a forward-only encode. One class for every architecture,
// named by its shape (BertTopShape, UseLiteTopShape), which supplies kName, Cache<S>, empty(), token_width(),
// vector_width(), parameter_count() and validate(), with the passes top_forward<S> and top_backward<S> beside it.
#include <vector>

#include "relmem/common.hpp"
#include "relmem/encoders/finetuning/token_states.hpp"

namespace relmem {

template <typename TopShape>
class TrainableTop {
 public:
  using Shape = TopShape;
  using Cache = typename Shape::template Cache<float>;

  TrainableTop() = default;  // no layers: the encoder stays frozen
  TrainableTop(Shape shape, std::vector<float> parameters);  // relmem::Error on a size mismatch

  bool empty() const { return shape_.empty(); }
  const Shape& shape() const { return shape_; }
  std::vector<float>& parameters() { return parameters_; }
  const std::vector<float>& parameters() const { return parameters_; }

  // L2-normalized sentence vectors (forward only), in chunks of sentences on all threads.
  RowMatrix encode(const TokenStates& states) const;
  // Forward keeping what backward needs; backward adds the parameter gradient into `gradient`.
  RowMatrix forward(const TokenStates& states, Cache& cache) const;
  void backward(const Cache& cache, const RowMatrix& d_vectors, std::vector<float>& gradient) const;

 private:
  void check(const TokenStates& states) const;

  Shape shape_;
  std::vector<float> parameters_;
};

}  // namespace relmem
