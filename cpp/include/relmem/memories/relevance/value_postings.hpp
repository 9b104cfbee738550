#pragma once
// Which databases of a collection store a value. A question's phrases (question_phrases) found among the stored
// values of a database are evidence for it, weighted by the value's rarity in the collection:
//   evidence(question, db) = sum over phrases p stored in db of boost(p) x log(N / number of databases storing p)
// with N the collection's size and boost(p) kNamedPhraseBoost for a phrase written as a name (is_named:
// "Gelderland", 'LA'), else 1. "Anguilla" or "Republic" points to the world database; "name" or "yes", stored
// almost everywhere, points nowhere.
//
// File format (little-endian, version 1; sections start at multiples of 64 bytes, the gaps zero, so a mapped file
// is used in place):
//   "RMVP" | u32 1 | u64 values | u64 text bytes | u64 postings | u64 databases
//   | u64 text_offsets[values + 1] | the values' UTF-8 texts, ascending bytewise, back to back
//   | u64 holder_offsets[values + 1] | i64 holders[postings] (per value, ascending database ids)
//   | i64 databases[databases] (ascending) | u64 database_offsets[databases + 1] | u32 value_numbers[postings]
//     (per database, ascending) | u64 FNV-1a checksum (64-bit words) of every byte before it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace relmem {

// A phrase written as a name (capitalized mid-sentence or quoted: "Gelderland") counts twice: people write stored
// values that way. Chosen on 2,334 Spider train questions against all 157 databases (recall@1 0.704 at 1, 0.708 at
// 2 and 2.5, 0.705 at 4, 0.689 at 8); the value weight 0.01 stayed best beside it (0.007, 0.015 and 0.02 lower).
constexpr float kNamedPhraseBoost = 2.0f;

class ValuePostings {
 public:
  // Replaces the values of database `id` (normalized texts; order and repeats do not matter).
  void add(int64_t id, std::vector<std::string> values);
  void remove(int64_t id);
  bool contains(int64_t id) const;
  std::vector<std::string> values(int64_t id) const;  // sorted, unique; empty for an unknown id
  // Bytes of the stored values and their holders held in this process's own memory (a mapped file's excluded).
  size_t memory_bytes() const;

  // The evidence of every database storing at least one of the (normalized, unique) phrases.
  std::unordered_map<int64_t, float> evidence(const std::vector<std::string>& phrases, int64_t collection_size) const;
  // The same with each phrase's weight multiplied by its boost.
  std::unordered_map<int64_t, float> evidence(const std::vector<std::string>& phrases, const std::vector<float>& boosts,
                                              int64_t collection_size) const;
  // The same for a question's phrases of up to three words ("new york city").
  std::unordered_map<int64_t, float> question_evidence(const std::string& question, int64_t collection_size) const;

  void save(const std::string& path) const;
  // mmap: the file is mapped and used in place (checked whole at once, a few bytes per stored value); it is copied
  // into memory the first time the postings change.
  static ValuePostings load(const std::string& path, bool mmap = false);

 private:
  struct Mapped;
  struct Span {
    const int64_t* ids = nullptr;
    size_t size = 0;
  };
  Span holders(const std::string& value) const;
  void own();  // copies a mapped file's postings into the maps

  std::unordered_map<std::string, std::vector<int64_t>> holders_;  // value -> databases storing it
  std::unordered_map<int64_t, std::vector<const std::string*>> values_;  // keys of holders_ (stable addresses)
  std::shared_ptr<const Mapped> mapped_;  // instead of the maps while not changed since load
};

}  // namespace relmem
