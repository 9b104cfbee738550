#include "relmem/llm/stages.hpp"

#include <algorithm>

#include "relmem/common.hpp"

namespace relmem {

const std::vector<std::string>& known_stages() {
  static const std::vector<std::string> names = {stage::kContextSwitch, stage::kPlan,         stage::kCorrectValues,
                                                 stage::kRefine,        stage::kSelfCorrect,  stage::kReturnType,
                                                 stage::kGenerateOutput, stage::kRephrase,
                                                 stage::kHybridPropose, stage::kHybridFill, stage::kHybridMap,
                                                 stage::kHybridQa, stage::kHybridMatch};
  return names;
}

void check_stage(const std::string& name) {
  if (name.empty()) return;
  const auto& names = known_stages();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown LLM stage '" + name + "' (known: " + known + ")");
}

}  // namespace relmem
