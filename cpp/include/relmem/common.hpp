#pragma once
// Types shared by every stage of the pipeline.
#include <Eigen/Core>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace relmem {

// Every error relmem raises on bad input; Python sees it as relmem.Error with the same message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Row-major so that row i is the embedding of item i and maps 1:1 onto a numpy (n, dim) array.
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using IdMatrix = Eigen::Matrix<int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Scratch floats that Eigen reduces or multiplies: Eigen peels a buffer's unaligned head, so the order of a sum (and
// its last bits) depends on where the buffer starts. Aligned to the widest packet, a result has the same bits
// whichever thread, call or batch computes it.
using AlignedFloats = std::vector<float, Eigen::aligned_allocator<float>>;

}  // namespace relmem
