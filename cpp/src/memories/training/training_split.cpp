#include "training_split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "relmem/common.hpp"

namespace relmem::training {

TrainingSplit split_training_data(const std::vector<std::string>& databases, const std::vector<LabeledQuestion>& questions,
                                  float heldout_fraction, int max_composite, float composite_ratio, std::mt19937_64& rng) {
  TrainingSplit split;
  for (size_t i = 0; i < databases.size(); ++i) {
    if (!split.index_of.emplace(databases[i], static_cast<int>(i)).second) {
      throw Error("training: database '" + databases[i] + "' is listed twice");
    }
  }
  std::vector<int> order(databases.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  size_t heldout_count = static_cast<size_t>(std::lround(heldout_fraction * static_cast<float>(order.size())));
  if (heldout_fraction > 0.0f) heldout_count = std::clamp<size_t>(heldout_count, 2, order.size() - 2);
  if (order.size() < 4) heldout_count = 0;
  split.heldout.assign(databases.size(), 0);
  for (size_t i = 0; i < heldout_count; ++i) split.heldout[static_cast<size_t>(order[i])] = 1;
  for (size_t i = 0; i < databases.size(); ++i) {
    if (split.heldout[i]) {
      split.heldout_databases.push_back(databases[i]);
    } else {
      split.training_databases.push_back(static_cast<int>(i));
    }
  }
  std::sort(split.heldout_databases.begin(), split.heldout_databases.end());

  for (const auto& q : questions) {
    bool known = !q.databases.empty(), all_heldout = true, any_heldout = false;
    for (const auto& db : q.databases) {
      auto it = split.index_of.find(db);
      if (it == split.index_of.end()) {
        known = false;
        break;
      }
      all_heldout = all_heldout && split.heldout[static_cast<size_t>(it->second)];
      any_heldout = any_heldout || split.heldout[static_cast<size_t>(it->second)];
    }
    if (!known) continue;
    if (all_heldout) {
      split.heldout_questions.push_back(q);
    } else if (!any_heldout) {
      split.train.push_back(q);
    }
  }
  if (split.train.empty()) throw Error("training: no question names one of the training databases");
  split.train_singles = static_cast<int64_t>(split.train.size());
  split.heldout_singles = static_cast<int64_t>(split.heldout_questions.size());
  auto composites_of = [&](const std::vector<LabeledQuestion>& singles) {
    if (max_composite < 2) return std::vector<LabeledQuestion>();
    CompositeOptions composite;
    composite.max_parts = max_composite;
    return make_composites(singles, std::llround(composite_ratio * static_cast<double>(singles.size())), composite,
                           rng);
  };
  const auto train_composites = composites_of(split.train);
  const auto heldout_composites = composites_of(split.heldout_questions);
  split.train_composites = static_cast<int64_t>(train_composites.size());
  split.train.insert(split.train.end(), train_composites.begin(), train_composites.end());
  split.heldout_questions.insert(split.heldout_questions.end(), heldout_composites.begin(), heldout_composites.end());
  return split;
}

}  // namespace relmem::training
