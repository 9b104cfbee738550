#pragma once
// Encoded training data: a collection's card and table rows, questions with their databases, the frozen encoder's
// cosines between them, and ranking metrics over a (questions x databases) score matrix.
#include <string>
#include <vector>

#include "relmem/encoders/encoder.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"
#include "relmem/memories/relevance/selection_calibration.hpp"
#include "relmem/memories/relevance/similarity_fusion.hpp"
#include "relmem/memories/relevance/value_postings.hpp"

namespace relmem::relevance {

struct EncodedCollection {
  RowMatrix cards;                    // (databases, d)
  RowMatrix tables;                   // every database owns >= 1 row: its tables, or its card when it has none
  std::vector<int> table_offsets{0};  // databases + 1
  RowMatrix lexical_cards;            // the same rows from the lexical encoder, IDF-weighted; empty without one
  RowMatrix lexical_tables;
  std::vector<float> idf;             // the lexical weights of this collection
  RowMatrix columns;                  // every database owns >= 1 row: its columns, or its card when it has none
  std::vector<int> column_offsets{0};
  ValuePostings values;               // by database index
  int size() const { return static_cast<int>(cards.rows()); }
  bool lexical() const { return lexical_cards.size() > 0; }
};

struct EncodedQuestions {
  RowMatrix vectors;                        // (questions, d)
  std::vector<std::vector<int>> databases;  // indices into the collection
  // (questions, databases) cosines: with the card and the best table, from both encoders (lexical ones 0 without),
  // with the best column, and the stored-value evidence.
  RowMatrix raw_card, raw_table, lexical_card, lexical_table, raw_column, value;
  std::vector<RawSimilarities> best;  // per question: the maxima over the collection

  RawSimilarities raw(int64_t question, int database) const {
    return {raw_card(question, database),      raw_table(question, database), lexical_card(question, database),
            lexical_table(question, database), raw_column(question, database), value(question, database)};
  }
  EncodedQuestions bottom_rows(int64_t count) const;
};

// `lexical` may be null.
EncodedCollection encode_collection(const Encoder& encoder, const Encoder* lexical,
                                    const std::vector<DatabaseTexts>& databases, const std::string& cache_dir);
// Encodes the questions and fills every cosine matrix.
EncodedQuestions encode_questions(const Encoder& encoder, const Encoder* lexical, const std::vector<std::string>& texts,
                                  std::vector<std::vector<int>> databases, const EncodedCollection& collection,
                                  const std::string& cache_dir);

// Untrained scores (untrained_score of every question and database).
RowMatrix fused_scores(const EncodedQuestions& questions, SimilarityFusion fusion, bool lexical);
// Model logits of every question against every database.
RowMatrix model_logits(const RelevanceModel& model, const EncodedCollection& collection,
                       const EncodedQuestions& questions);

struct RankingMetrics {
  double recall_at_1 = 0.0, recall_at_5 = 0.0;  // over questions with one database
  double all_in_top5 = 0.0;                     // over questions with several databases
  int64_t singles = 0, composites = 0;
};
RankingMetrics ranking_metrics(const RowMatrix& scores, const std::vector<std::vector<int>>& databases);
// The top `candidates` databases of every question, with relevance labels, for calibration.
std::vector<ScoredQuestion> scored_questions(const RowMatrix& scores, const std::vector<std::vector<int>>& databases,
                                             int candidates);

}  // namespace relmem::relevance
