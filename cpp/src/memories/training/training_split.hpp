#pragma once
// The trainers' data split: databases drawn into training and held-out ones, questions following their databases,
// and composite questions made within each side.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "relmem/memories/relevance/labeled_questions.hpp"

namespace relmem::training {

struct TrainingSplit {
  std::map<std::string, int> index_of;         // database name -> index in the collection
  std::vector<char> heldout;                    // per database
  std::vector<int> training_databases;          // indices, in collection order
  std::vector<std::string> heldout_databases;   // names, sorted
  std::vector<LabeledQuestion> train;           // training questions, then their composites
  int64_t train_singles = 0, train_composites = 0;
  std::vector<LabeledQuestion> heldout_questions;   // held-out questions, then their composites
  int64_t heldout_singles = 0;
};

// A question goes to the side that holds all its databases (one naming both sides, or a database outside
// `databases`, is dropped). relmem::Error on a database listed twice or no training question.
TrainingSplit split_training_data(const std::vector<std::string>& databases, const std::vector<LabeledQuestion>& questions,
                                  float heldout_fraction, int max_composite, float composite_ratio, std::mt19937_64& rng);

}  // namespace relmem::training
