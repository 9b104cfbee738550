#include "relmem/encoders/finetuning/token_states.hpp"

namespace relmem {

TokenStates TokenStates::select(const std::vector<int>& sentences) const {
  TokenStates out;
  int64_t rows_needed = 0;
  for (int s : sentences) {
    if (s < 0 || s >= this->sentences()) throw Error("token states: sentence index out of range");
    rows_needed += offsets[s + 1] - offsets[s];
  }
  out.rows.resize(rows_needed, rows.cols());
  for (int s : sentences) {
    const int length = offsets[s + 1] - offsets[s];
    out.rows.middleRows(out.offsets.back(), length) = rows.middleRows(offsets[s], length);
    out.offsets.push_back(out.offsets.back() + length);
  }
  return out;
}

void TokenStates::check() const {
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != rows.rows()) {
    throw Error("token states: offsets must start at 0 and end at the row count");
  }
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1]) throw Error("token states: offsets must not decrease");
}

}  // namespace relmem
