#pragma once
// The ids of a VectorIndex's rows and the row of each id. While the ids are one consecutive run (the usual case:
// ids assigned in order, or saved that way) the row of an id is computed, with no hash map to build or keep; the
// map is built the first time the run breaks.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace relmem {

class IdRows {
 public:
  // Replaces the ids; false (and left empty) when they hold a duplicate.
  bool assign(std::vector<int64_t> ids);
  // Appends ids the caller checked are new and distinct.
  void append(const int64_t* ids, int64_t n);
  // Removes an id by moving the last row's id into its row; returns that row, or -1 when the id is absent.
  int64_t remove(int64_t id);

  int64_t row_of(int64_t id) const;  // -1 when absent
  bool contains(int64_t id) const { return row_of(id) >= 0; }
  int64_t id_at(int64_t row) const { return ids_[static_cast<size_t>(row)]; }
  const std::vector<int64_t>& ids() const { return ids_; }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  size_t memory_bytes() const;

 private:
  void build_map();

  std::vector<int64_t> ids_;
  bool consecutive_ = true;  // ids_[r] == ids_[0] + r for every row
  std::unordered_map<int64_t, int64_t> row_of_id_;  // only while !consecutive_
};

}  // namespace relmem
