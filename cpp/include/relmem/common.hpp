#pragma once
// Types shared by every stage of the pipeline.
#include <Eigen/Core>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace relmem {

// Every error relmem raises on bad input; Python sees it as relmem.Error with the same message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Row-major so that row i is the embedding of item i and maps 1:1 onto a numpy (n, dim) array.
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using IdMatrix = Eigen::Matrix<int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace relmem
