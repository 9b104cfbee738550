#include "relmem/encoders/finetuning/token_states.hpp"

#include <utility>

#include "../../common/parallel_for.hpp"

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

TokenStates stack_token_states(const std::vector<std::vector<int32_t>>& ids, int width, int max_run_tokens,
                               const TokenStatesFill& fill) {
  const int count = static_cast<int>(ids.size());
  TokenStates states;
  for (const auto& sequence : ids) states.offsets.push_back(states.offsets.back() + static_cast<int>(sequence.size()));
  states.rows.resize(states.offsets.back(), width);
  std::vector<std::pair<int, int>> runs;
  for (int begin = 0; begin < count;) {
    int end = begin + 1;
    while (end < count && states.offsets[end + 1] - states.offsets[begin] <= max_run_tokens) ++end;
    runs.emplace_back(begin, end);
    begin = end;
  }
  parallel_for(static_cast<int64_t>(runs.size()), 2, [&](int64_t run) {
    const auto [begin, end] = runs[static_cast<size_t>(run)];
    std::vector<const std::vector<int32_t>*> texts;
    for (int i = begin; i < end; ++i) texts.push_back(&ids[static_cast<size_t>(i)]);
    fill(texts, states.rows.data() + static_cast<int64_t>(states.offsets[begin]) * width);
  });
  return states;
}

}  // namespace relmem
