#pragma once
// Token activations entering an encoder's fine-tuned top layers: the frozen layers below run once per text and
// training reads their output from here.
#include <cstdint>
#include <functional>
#include <vector>

#include "relmem/common.hpp"

namespace relmem {

// Every sentence's tokens stacked: sentence s owns rows [offsets[s], offsets[s+1]); a text without tokens owns none.
struct TokenStates {
  RowMatrix rows;
  std::vector<int> offsets{0};

  int sentences() const { return static_cast<int>(offsets.size()) - 1; }
  // The given sentences' rows, in the given order (a sentence may repeat).
  TokenStates select(const std::vector<int>& sentences) const;
  // relmem::Error unless offsets start at 0, never decrease and end at the row count.
  void check() const;
};

// The stacked token states of tokenized texts, `width` wide. fill(texts, rows) writes the states of consecutive
// texts into `rows` (row-major, their tokens stacked); the texts reach it in runs of at most max_run_tokens tokens
// (a longer text alone), the runs on all threads.
using TokenStatesFill = std::function<void(const std::vector<const std::vector<int32_t>*>& texts, float* rows)>;
TokenStates stack_token_states(const std::vector<std::vector<int32_t>>& ids, int width, int max_run_tokens,
                               const TokenStatesFill& fill);

}  // namespace relmem
