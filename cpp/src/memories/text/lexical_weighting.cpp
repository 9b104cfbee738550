#include "relmem/memories/text/lexical_weighting.hpp"

#include <cmath>

namespace relmem {

std::vector<float> inverse_document_frequencies(const std::vector<int64_t>& document_frequency, int64_t documents) {
  std::vector<float> idf(document_frequency.size());
  for (size_t j = 0; j < idf.size(); ++j) {
    idf[j] = static_cast<float>(std::log((static_cast<double>(documents) + 1.0) /
                                         (static_cast<double>(document_frequency[j]) + 1.0)));
  }
  return idf;
}

std::vector<int64_t> document_frequencies(const RowMatrix& rows) {
  std::vector<int64_t> df(static_cast<size_t>(rows.cols()), 0);
  for (int64_t i = 0; i < rows.rows(); ++i)
    for (int64_t j = 0; j < rows.cols(); ++j) df[static_cast<size_t>(j)] += rows(i, j) != 0.0f ? 1 : 0;
  return df;
}

RowMatrix weigh_rows(const RowMatrix& rows, const std::vector<float>& weights) {
  if (static_cast<int64_t>(weights.size()) != rows.cols()) throw Error("lexical weights do not match the vectors");
  RowMatrix out = rows * Eigen::Map<const Eigen::VectorXf>(weights.data(), rows.cols()).asDiagonal();
  for (int64_t i = 0; i < out.rows(); ++i) {
    const float norm = out.row(i).norm();
    if (norm > 0.0f) out.row(i) /= norm;
  }
  return out;
}

}  // namespace relmem
