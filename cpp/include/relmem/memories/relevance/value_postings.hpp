#pragma once
// Which databases of a collection store a value. A question's phrases (question_phrases) found among the stored
// values of a database are evidence for it, weighted by the value's rarity in the collection:
//   evidence(question, db) = sum over phrases p stored in db of log(N / number of databases storing p)
// with N the collection's size. "Anguilla" or "Republic" points to the world database; "name" or "yes", stored
// almost everywhere, points nowhere.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace relmem {

class ValuePostings {
 public:
  // Replaces the values of database `id` (normalized texts; order and repeats do not matter).
  void add(int64_t id, std::vector<std::string> values);
  void remove(int64_t id);
  bool contains(int64_t id) const { return values_.count(id) > 0; }
  std::vector<std::string> values(int64_t id) const;  // sorted, unique; empty for an unknown id
  // Bytes of the stored values and their holders.
  size_t memory_bytes() const;

  // The evidence of every database storing at least one of the (normalized, unique) phrases.
  std::unordered_map<int64_t, float> evidence(const std::vector<std::string>& phrases, int64_t collection_size) const;
  // The same for a question's phrases of up to three words ("new york city").
  std::unordered_map<int64_t, float> question_evidence(const std::string& question, int64_t collection_size) const;

 private:
  std::unordered_map<std::string, std::vector<int64_t>> holders_;  // value -> databases storing it
  std::unordered_map<int64_t, std::vector<const std::string*>> values_;  // keys of holders_ (stable addresses)
};

}  // namespace relmem
