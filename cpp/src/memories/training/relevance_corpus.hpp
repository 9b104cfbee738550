#pragma once
// Encoded training data: a collection's card and table rows, questions with their databases, the frozen encoder's
// cosines between them, and ranking metrics over a (questions x databases) score matrix.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "relmem/encoders/encoder.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"
#include "relmem/memories/relevance/selection_calibration.hpp"
#include "relmem/memories/relevance/similarity_fusion.hpp"
#include "relmem/memories/selection/selection_memory.hpp"

namespace relmem::relevance {

struct EncodedCollection {
  RowMatrix cards;                    // (databases, d)
  RowMatrix tables;                   // every database owns >= 1 row: its tables, or its card when it has none
  std::vector<int> table_offsets{0};  // databases + 1
  // The same databases in a selection memory (no model): the raw similarities of training come from it, through
  // the call that scores questions in deployment.
  std::unique_ptr<SelectionMemory> memory;
  std::map<std::string, int> index_of;  // database name -> index
  int size() const { return static_cast<int>(cards.rows()); }
  bool lexical() const { return memory->lexical_encoder() != nullptr; }
};

struct EncodedQuestions {
  RowMatrix vectors;                        // (questions, d)
  std::vector<std::vector<int>> databases;  // indices into the collection
  // Raw similarities (SelectionMemory::similarities) of the memory's candidates, row-major (questions x
  // databases); the other databases are never scored (candidate 0, zeros).
  std::vector<RawSimilarities> raws;
  std::vector<PoolStanding> standings;  // the same cells
  std::vector<char> candidates;
  int databases_per_question = 0;
  std::vector<RawSimilarities> best;  // per question: the maxima over its candidates

  size_t cell(int64_t question, int database) const {
    return static_cast<size_t>(question) * static_cast<size_t>(databases_per_question) + static_cast<size_t>(database);
  }
  const RawSimilarities& raw(int64_t question, int database) const { return raws[cell(question, database)]; }
  const PoolStanding& standing(int64_t question, int database) const { return standings[cell(question, database)]; }
  bool is_candidate(int64_t question, int database) const { return candidates[cell(question, database)] != 0; }
  EncodedQuestions bottom_rows(int64_t count) const;
};

// `lexical` may be null.
EncodedCollection encode_collection(const Encoder& encoder, const Encoder* lexical,
                                    const std::vector<DatabaseTexts>& databases, const std::string& cache_dir);
// Encodes the questions and fills every similarity matrix.
EncodedQuestions encode_questions(const Encoder& encoder, const std::vector<std::string>& texts,
                                  std::vector<std::vector<int>> databases, const EncodedCollection& collection,
                                  const std::string& cache_dir);

// Untrained scores (untrained_score) and model logits of every question against every database; -infinity for
// the databases that are not its candidates.
RowMatrix fused_scores(const EncodedQuestions& questions, SimilarityFusion fusion, bool lexical);
RowMatrix model_logits(const RelevanceModel& model, const EncodedCollection& collection,
                       const EncodedQuestions& questions);

// ranking_metrics (selection_metrics.hpp) of the questions with one database and of those with several.
struct HeldoutMetrics {
  double recall_at_1 = 0.0, recall_at_5 = 0.0;  // over questions with one database
  double all_in_top5 = 0.0;                     // over questions with several databases
  int64_t singles = 0, composites = 0;
};
HeldoutMetrics heldout_metrics(const RowMatrix& scores, const std::vector<std::vector<int>>& databases);
// The top `candidates` databases of every question, with relevance labels, for calibration.
std::vector<ScoredQuestion> scored_questions(const RowMatrix& scores, const std::vector<std::vector<int>>& databases,
                                             int candidates);

}  // namespace relmem::relevance
