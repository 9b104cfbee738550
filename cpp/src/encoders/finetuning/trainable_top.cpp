#include "relmem/encoders/finetuning/trainable_top.hpp"

#include <algorithm>
#include <string>

#include "../../common/parallel_for.hpp"
#include "relmem/encoders/finetuning/bert_top.hpp"
#include "relmem/encoders/finetuning/use_lite_top.hpp"

namespace relmem {
namespace {

// Sentences per chunk of TrainableTop::encode: bounds the activations held at once.
constexpr int kEncodeChunk = 64;

}  // namespace

template <typename TopShape>
TrainableTop<TopShape>::TrainableTop(Shape shape, std::vector<float> parameters)
    : shape_(std::move(shape)), parameters_(std::move(parameters)) {
  shape_.validate();
  if (static_cast<int64_t>(parameters_.size()) != shape_.parameter_count()) {
    throw Error(std::string(TopShape::kName) + ": " + std::to_string(parameters_.size()) +
                " parameters where its shape needs " + std::to_string(shape_.parameter_count()));
  }
}

template <typename TopShape>
void TrainableTop<TopShape>::check(const TokenStates& states) const {
  if (empty()) throw Error(std::string(TopShape::kName) + " has no layers");
  if (states.rows.cols() != shape_.token_width()) {
    throw Error(std::string(TopShape::kName) + " takes " + std::to_string(shape_.token_width()) +
                "-wide token states, got " + std::to_string(states.rows.cols()));
  }
  states.check();
}

template <typename TopShape>
RowMatrix TrainableTop<TopShape>::forward(const TokenStates& states, Cache& cache) const {
  check(states);
  return top_forward<float>(shape_, parameters_.data(), states.rows, states.offsets, cache);
}

template <typename TopShape>
void TrainableTop<TopShape>::backward(const Cache& cache, const RowMatrix& d_vectors, std::vector<float>& gradient) const {
  if (gradient.size() != parameters_.size()) throw Error(std::string(TopShape::kName) + ": gradient buffer has the wrong size");
  if (d_vectors.rows() != cache.pooled.rows() || d_vectors.cols() != shape_.vector_width()) {
    throw Error(std::string(TopShape::kName) + ": the vectors' gradient does not match the forward pass");
  }
  top_backward<float>(shape_, parameters_.data(), cache, d_vectors, gradient.data());
}

template <typename TopShape>
RowMatrix TrainableTop<TopShape>::encode(const TokenStates& states) const {
  check(states);
  const int sentences = states.sentences();
  RowMatrix out(sentences, shape_.vector_width());
  const int chunks = (sentences + kEncodeChunk - 1) / kEncodeChunk;
  parallel_for(chunks, 2, [&](int64_t chunk) {
    const int begin = static_cast<int>(chunk) * kEncodeChunk, end = std::min(sentences, begin + kEncodeChunk);
    std::vector<int> offsets;
    for (int s = begin; s <= end; ++s) offsets.push_back(states.offsets[s] - states.offsets[begin]);
    const RowMatrix rows = states.rows.middleRows(states.offsets[begin], offsets.back());
    Cache cache;
    out.middleRows(begin, end - begin) = top_forward<float>(shape_, parameters_.data(), rows, offsets, cache);
  });
  return out;
}

template class TrainableTop<BertTopShape>;
template class TrainableTop<UseLiteTopShape>;

}  // namespace relmem
