#include "relmem/index/id_rows.hpp"

namespace relmem {

bool IdRows::assign(std::vector<int64_t> ids) {
  ids_ = std::move(ids);
  row_of_id_.clear();
  consecutive_ = true;
  for (size_t r = 1; r < ids_.size() && consecutive_; ++r) consecutive_ = ids_[r] == ids_[0] + static_cast<int64_t>(r);
  if (consecutive_) return true;
  build_map();
  if (row_of_id_.size() == ids_.size()) return true;
  ids_.clear();
  row_of_id_.clear();
  consecutive_ = true;
  return false;
}

void IdRows::append(const int64_t* ids, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = size();
    if (consecutive_ && row > 0 && ids[i] != ids_[0] + row) build_map();
    ids_.push_back(ids[i]);
    if (!consecutive_) row_of_id_[ids[i]] = row;
  }
}

int64_t IdRows::remove(int64_t id) {
  const int64_t row = row_of(id);
  if (row < 0) return -1;
  const int64_t last = size() - 1;
  if (row != last && consecutive_) build_map();
  if (!consecutive_) {
    row_of_id_.erase(id);
    if (row != last) {
      ids_[static_cast<size_t>(row)] = ids_.back();
      row_of_id_[ids_.back()] = row;
    }
  }
  ids_.pop_back();
  return row;
}

int64_t IdRows::row_of(int64_t id) const {
  if (consecutive_) {
    if (ids_.empty() || id < ids_[0] || id - ids_[0] >= size()) return -1;
    return id - ids_[0];
  }
  auto it = row_of_id_.find(id);
  return it == row_of_id_.end() ? -1 : it->second;
}

size_t IdRows::memory_bytes() const {
  // An unordered_map node holds the pair and a next pointer; the bucket array one pointer per bucket.
  return ids_.capacity() * sizeof(int64_t) +
         row_of_id_.size() * (2 * sizeof(int64_t) + sizeof(void*) + sizeof(size_t)) +
         row_of_id_.bucket_count() * sizeof(void*);
}

void IdRows::build_map() {
  consecutive_ = false;
  row_of_id_.reserve(ids_.size());
  for (size_t r = 0; r < ids_.size(); ++r) row_of_id_[ids_[r]] = static_cast<int64_t>(r);
}

}  // namespace relmem
