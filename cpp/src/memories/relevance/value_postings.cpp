#include "relmem/memories/relevance/value_postings.hpp"

#include <algorithm>
#include <cmath>

#include "relmem/memories/text/question_spans.hpp"

namespace relmem {

void ValuePostings::add(int64_t id, std::vector<std::string> values) {
  remove(id);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<const std::string*> keys;
  for (auto& value : values) {
    auto it = holders_.try_emplace(std::move(value)).first;
    it->second.push_back(id);
    keys.push_back(&it->first);
  }
  values_[id] = std::move(keys);
}

void ValuePostings::remove(int64_t id) {
  auto it = values_.find(id);
  if (it == values_.end()) return;
  for (const std::string* value : it->second) {
    auto holders = holders_.find(*value);
    auto& ids = holders->second;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    if (ids.empty()) holders_.erase(holders);
  }
  values_.erase(it);
}

size_t ValuePostings::memory_bytes() const {
  size_t bytes = 0;
  for (const auto& [value, ids] : holders_) bytes += sizeof(value) + value.size() + ids.size() * sizeof(int64_t);
  for (const auto& [_, keys] : values_) bytes += sizeof(int64_t) + keys.size() * sizeof(const std::string*);
  return bytes;
}

std::vector<std::string> ValuePostings::values(int64_t id) const {
  std::vector<std::string> out;
  auto it = values_.find(id);
  if (it != values_.end())
    for (const std::string* value : it->second) out.push_back(*value);
  return out;
}

std::unordered_map<int64_t, float> ValuePostings::evidence(const std::vector<std::string>& phrases,
                                                           int64_t collection_size) const {
  std::unordered_map<int64_t, float> out;
  for (const auto& phrase : phrases) {
    auto it = holders_.find(phrase);
    if (it == holders_.end()) continue;
    const auto holders = static_cast<double>(it->second.size());
    const double weight = std::log(std::max(static_cast<double>(collection_size), holders) / holders);
    for (int64_t id : it->second) out[id] += static_cast<float>(weight);
  }
  return out;
}

std::unordered_map<int64_t, float> ValuePostings::question_evidence(const std::string& question,
                                                                    int64_t collection_size) const {
  return evidence(question_phrases(question, 3), collection_size);
}

}  // namespace relmem
