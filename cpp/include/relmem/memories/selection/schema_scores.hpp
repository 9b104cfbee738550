#pragma once
// How close a question is to each table and column of a database, by the selection memory's stored sentence-encoder
// vectors: what a prompt's schema context is chosen by (python/relmem/agent/context_builder.py).
#include <string>
#include <vector>

namespace relmem {

struct SchemaScores {
  std::string database;
  std::vector<std::string> tables;
  std::vector<float> table_scores;   // cosine of the question with each table's card, in `tables` order
  // Cosine with each column's text ("singer country"): the columns of every table in the catalog's order. Empty for
  // a database added from vectors without column rows.
  std::vector<float> column_scores;
};

}  // namespace relmem
