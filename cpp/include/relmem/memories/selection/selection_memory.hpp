#pragma once
// Database selection memory: every database of a collection is embedded from its card (schema, optional
// description and example questions), from one card per table, from one text per column and from questions one could
// ask of each table (database_texts.hpp), by the sentence encoder, and its card and tables by a lexical (hashing)
// encoder that also reads the sample values; its stored
// text values are indexed too (value_postings.hpp). Candidate databases are scored either by fusing these
// similarities (untrained, similarity_fusion.hpp) or by a trained RelevanceModel, and every score is turned into a
// calibrated probability.
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "relmem/catalog/catalog.hpp"
#include "relmem/encoders/encoder.hpp"
#include "relmem/index/quantized_rows.hpp"
#include "relmem/index/vector_index.hpp"
#include "relmem/memories/memory_refresh.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/relevance/labeled_questions.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"
#include "relmem/memories/relevance/selection_calibration.hpp"
#include "relmem/memories/relevance/similarity_fusion.hpp"
#include "relmem/memories/relevance/value_postings.hpp"
#include "relmem/memories/selection/schema_scores.hpp"
#include "relmem/memories/selection/selection_options.hpp"
#include "relmem/memories/text/question_parts.hpp"
#include "relmem/memories/text/sparse_postings.hpp"
#include "relmem/memories/text/sparse_vectors.hpp"

namespace relmem {

// A question word meets a column as well as its best WordNet synonym does, the synonym's cosine times this
// (chosen on train_spider.json; docs/selection.md).
constexpr float kSynonymWeight = 0.95f;

// What the memory scores a question by (untrained fusion or trained model alike): the raw similarities of each
// candidate database and their maxima over the candidates. Training computes its features through the same call.
struct QuestionSimilarities {
  std::vector<std::string> databases;  // the candidates: every database of a collection of at most
                                       // SelectionOptions::candidates, else the narrowed ones
  std::vector<RawSimilarities> raw;    // one per candidate
  RawSimilarities best;                // component-wise maxima over the candidates
  std::vector<PoolStanding> standings;  // one per candidate (pool_standings)
};

// What the memory stores of one database, in the form add_vectors takes it (rows as stored: normalized, and
// through the compact dtype's rounding where the store is compact).
struct DatabaseVectors {
  std::vector<float> card;
  std::vector<std::string> table_names;
  RowMatrix tables;
  RowMatrix columns;
  std::vector<int64_t> table_columns;  // per table, its number of columns (in table order); empty when unknown
  std::vector<std::string> values;  // normalized
  std::vector<float> lexical_card;  // empty without a lexical encoder
  RowMatrix lexical_tables;
  RowMatrix forms;  // its question forms (database_texts.hpp); empty when stored without them
};

struct DatabaseMatch {
  std::string database;
  float score = 0.0f;        // fused cosine (untrained) or model logit (trained)
  float probability = 0.0f;  // calibrated p(relevant | question)
};

// probability = answered * sigmoid(scale * score + lead * (score - the best other candidate's score) + bias), where
// answered = sigmoid(gate_scale * the ranking's best score + gate_bias) when gated, else 1 (PlattScaling); set
// selection keeps probabilities >= threshold. The lead tells a database that stands out from one among equals; the
// gate, a question that some database answers from one that none does.
struct SelectionCalibration {
  float scale = 1.0f;
  float bias = 0.0f;
  float threshold = 0.5f;
  bool fitted = false;  // false: defaults (untrained) or the model's own threshold (trained)
  float lead = 0.0f;
  bool gated = false;
  float gate_scale = 0.0f;
  float gate_bias = 0.0f;
  PlattScaling platt() const { return {scale, bias, lead, gated, gate_scale, gate_bias}; }
};

// Safe to use from several threads, also while one of them adds, removes or refreshes databases: updates take
// the memory's lock exclusively, questions share it.
class SelectionMemory {
 public:
  explicit SelectionMemory(std::shared_ptr<const Encoder> encoder, const SelectionOptions& options = {});

  // Embeds every database of the catalog, encoding many databases' texts per encoder call; `progress` is called
  // after each database. descriptions / examples: optional text per database name.
  static SelectionMemory build(const Catalog& catalog, std::shared_ptr<const Encoder> encoder,
                               std::shared_ptr<const RelevanceModel> model = nullptr,
                               const std::map<std::string, std::string>& descriptions = {},
                               const std::map<std::string, std::vector<std::string>>& examples = {},
                               const SelectionOptions& options = {}, const BuildProgress& progress = {});
  // Re-embeds the databases whose file changed (size or modification time), adds new ones and drops those the
  // catalog lacks (databases added from vectors among them). Re-embedded databases keep their description and
  // example questions.
  RefreshReport refresh(const Catalog& catalog, const BuildProgress& progress = {});

  // Adds (or re-embeds) one database of the catalog without touching the others.
  void add(const Catalog& catalog, const std::string& db, const std::string& description = "",
           const std::vector<std::string>& examples = {});
  // Adds several at once (many per encoder call).
  void add_all(const Catalog& catalog, const std::vector<std::string>& dbs,
               const std::map<std::string, std::string>& descriptions = {},
               const std::map<std::string, std::vector<std::string>>& examples = {},
               const BuildProgress& progress = {});
  // Adds a database from precomputed encoder rows: one card row and one row per table (tables may be empty),
  // and, when the memory has a lexical encoder, the same rows from it; optionally rows of its columns and its
  // normalized stored values (without them, the best table stands in for the best column and values give none),
  // and how many of the columns each table has (they follow table order; without it, they count as one table), and
  // rows of its question forms (without them, its best column stands in for the best form).
  void add_vectors(const std::string& db, const float* card, const std::vector<std::string>& table_names,
                   const RowMatrix& table_vectors, const float* lexical_card = nullptr,
                   const RowMatrix* lexical_tables = nullptr, const RowMatrix* column_vectors = nullptr,
                   std::vector<std::string> values = {}, std::vector<int64_t> table_columns = {},
                   const RowMatrix* form_vectors = nullptr);
  bool remove(const std::string& db);

  // Installs (or, with nullptr, removes) the relevance model; calibration resets to the model's threshold.
  void set_model(std::shared_ptr<const RelevanceModel> model);
  const std::shared_ptr<const RelevanceModel>& model() const { return model_; }

  std::vector<DatabaseMatch> select(const std::string& question, int k) const;
  std::vector<std::vector<DatabaseMatch>> select_batch(const std::vector<std::string>& questions, int k) const;
  // select() for a question already cut into parts (by an LLM, or by the asker): its parts are ranked and merged as
  // marked parts are (question_parts.hpp), without splitting them further. Empty parts are skipped; a question
  // without a non-empty part is an error.
  std::vector<DatabaseMatch> select_parts(const std::vector<std::string>& parts, int k) const;
  std::vector<std::vector<DatabaseMatch>> select_parts_batch(const std::vector<std::vector<std::string>>& questions,
                                                             int k) const;
  // The same from an encoded question (encoder().dim() floats), plus its lexical encoding when the memory has a
  // lexical encoder (lexical_encoder()->dim() floats). Not with a model that fine-tunes the encoder (it needs text);
  // without the text, stored values give no evidence.
  std::vector<DatabaseMatch> select_vector(const float* question, int k, const float* lexical_question = nullptr) const;
  // The candidates and raw similarities each question (whole, not split into parts) is scored by. `vectors`, when
  // given, are the questions' sentence-encoder rows (saves encoding them again).
  std::vector<QuestionSimilarities> similarities(const std::vector<std::string>& questions,
                                                 const RowMatrix* vectors = nullptr) const;
  // Every candidate whose probability clears the calibrated threshold, best first; with `at_least_one`, at least the
  // best database (of each part of a question with several parts: see question_parts.hpp), else possibly none.
  std::vector<DatabaseMatch> select_set(const std::string& question, bool at_least_one = true) const;
  std::vector<std::vector<DatabaseMatch>> select_set_batch(const std::vector<std::string>& questions,
                                                           bool at_least_one = true) const;
  // select_set() for a question already cut into parts (see select_parts).
  std::vector<DatabaseMatch> select_set_parts(const std::vector<std::string>& parts, bool at_least_one = true) const;

  // Fits the probability scaling (logistic regression of relevance on the score of each question's top `candidates`,
  // and on their lead with `lead`) and the set threshold (CalibrationObjective) on labelled held-out questions
  // (ordinary and composite, and questions no database answers: those without databases, which as a group weigh as
  // much as the others; with `gate`, they fit the gate of PlattScaling and the rest the ranking's factor); returns
  // the set-selection metrics on them at that threshold, each part's best kept.
  SetMetrics calibrate(const std::vector<LabeledQuestion>& questions, int candidates = 10,
                       CalibrationObjective objective = CalibrationObjective::SetF1, bool lead = false,
                       bool gate = false);
  const SelectionCalibration& calibration() const { return calibration_; }
  // What an untrained memory on this encoder has as calibration until calibrate() or set_calibration().
  static SelectionCalibration untrained_calibration(const std::string& encoder_name);
  void set_calibration(const SelectionCalibration& calibration);

  // A folder: manifest.json (versioned), cards.index, tables.index, columns.index, forms.index, values.postings,
  // lexical_cards.sparse and lexical_tables.sparse (with a lexical encoder) and relevance.model (with a model). Folders
  // saved before columns, values or question forms existed still load, without them, and so do those with
  // values.json (versions 2 and 3).
  // load maps the table, column, lexical and value files: they are read from disk as questions touch them.
  void save(const std::string& folder) const;
  // The encoders are reloaded by the names recorded in the manifest unless an encoder is given (its name and
  // dimension must match).
  static SelectionMemory load(const std::string& folder, std::shared_ptr<const Encoder> encoder = nullptr);

  std::vector<std::string> databases() const;  // sorted
  bool contains(const std::string& db) const;
  size_t size() const;
  std::vector<std::string> tables(const std::string& db) const;
  DatabaseVectors vectors(const std::string& db) const;  // unknown names throw
  // The question's cosine with every table and column of each of `dbs` (schema_scores.cpp); unknown names throw.
  std::vector<SchemaScores> schema_scores(const std::string& question, const std::vector<std::string>& dbs) const;
  const Encoder& encoder() const { return *encoder_; }
  const Encoder* lexical_encoder() const { return lexical_.get(); }
  std::shared_ptr<const Encoder> encoder_ptr() const { return encoder_; }
  const SelectionOptions& options() const { return options_; }
  // Moves the pool's approximate pass to `device` (SelectionOptions::device; "cpu" drops the GPU copy of the cards).
  // relmem::Error for a bad device name, or when relmem was built without CUDA or the device is not usable.
  void set_device(const std::string& device);
  // Bytes of the stored vectors (dense, int8 and sparse) and values, and of the lexical rows turned around once a
  // question has built them (at most `pool` databases).
  size_t memory_bytes() const;

 private:
  struct Entry {
    int64_t id = 0;                   // card id in cards_
    std::vector<std::string> tables;  // table ids are first_table .. first_table + tables.size() - 1
    int64_t first_table = 0;
    int64_t columns = 0;  // column ids are first_column .. first_column + columns - 1
    int64_t first_column = 0;
    int64_t forms = 0;  // question form ids are first_form .. first_form + forms - 1
    int64_t first_form = 0;
    // Per table: how many of the columns are its (they follow table order). Empty when unknown (added from vectors,
    // or saved by an earlier relmem): the columns then count as one table.
    std::vector<int64_t> table_columns;
    std::string description;
    std::vector<std::string> examples;
    DatabaseFile file;  // empty path when added from vectors
    RowMatrix projected;  // with a model: row 0 the projected card, then one row per table (or the card again)
  };
  struct Candidate {
    const Entry* entry = nullptr;
    RawSimilarities raw;
  };
  // A question's content words (question_phrases of one word) as unit vectors, and their WordNet synonyms': each
  // word meets a column as well as its best synonym does ("vocalizer" meets the columns of `singer`).
  struct QuestionWords {
    RowMatrix vectors;
    RowMatrix synonyms;
    std::vector<int64_t> synonym_of;  // per synonyms row: its word's row in vectors
  };
  struct EncodedQuestions {
    RowMatrix vectors;
    std::vector<std::unordered_map<int64_t, float>> value_evidence;  // per question: card id -> evidence
    RowMatrix lexical;  // empty without a lexical encoder
    RowMatrix tuned;    // through the model's fine-tuned encoder top; empty without one
    std::vector<QuestionWords> words;  // per question
  };
  // IDF weights of the lexical channel; they depend on the whole collection, so they are recomputed (from the
  // stored document frequencies) on the first question after an add or remove.
  struct LexicalWeights {
    std::vector<float> idf;
    // At most `pool` databases: every card and table is scored for each question, through their rows turned
    // around; entry e's card is slot first_slot.at(e.id), its tables the slots after it. Null above the pool.
    std::unique_ptr<const SparsePostings> postings;
    std::unordered_map<int64_t, int64_t> first_slot;
  };
  struct LexicalCache {
    std::mutex mutex;
    std::shared_ptr<const LexicalWeights> weights;  // null when stale
  };
  // Every database's RawSimilarities::hubness by card id, for collections of at most `pool` databases (larger ones
  // score without it: it reads every stored row). Like the lexical weights it depends on the whole collection, so it
  // is recomputed on the first question after an add or remove.
  struct HubnessCache {
    std::mutex mutex;
    std::shared_ptr<const std::unordered_map<int64_t, float>> of_card;  // null when stale
  };
  // The number of reference questions hubness is measured on: the question forms whose (database, form number)
  // hashes lowest, so that the choice is the collection's alone.
  static constexpr size_t kHubnessReferences = 256;
  // Unit vectors of question words already encoded (encode_words): words recur across questions, and encoding
  // them anew would cost more than the rest of the ranking. Emptied when it reaches kCachedWords.
  struct WordCache {
    std::mutex mutex;
    std::unordered_map<std::string, Eigen::RowVectorXf> vectors;
  };
  static constexpr size_t kCachedWords = 100000;
  std::shared_ptr<const LexicalWeights> lexical_weights() const;
  std::shared_ptr<const std::unordered_map<int64_t, float>> hubness() const;
  void collection_changed();  // the lexical weights and hubness go stale

  // Encodes the texts of `dbs` in one encoder call and inserts them.
  void insert_texts(const std::vector<std::string>& dbs, std::vector<DatabaseTexts>& texts, const Catalog& catalog,
                    const std::map<std::string, std::string>& descriptions,
                    const std::map<std::string, std::vector<std::string>>& examples);
  void insert(const std::string& db, Entry entry, const float* card, const RowMatrix& table_vectors,
              const float* lexical_card, const RowMatrix* lexical_tables, const RowMatrix& column_vectors,
              std::vector<std::string> values, const RowMatrix& form_vectors);
  bool remove_entry(const std::string& db);  // remove() without the lock
  void project(Entry& entry) const;
  using Pool = std::vector<const Entry*>;
  // The pools of n questions (rows of dim() floats, any norm; see SelectionOptions::pool): on a CUDA device in one
  // search, on the CPU one question after another.
  std::vector<Pool> pools(const float* questions, int64_t n) const;
  // The candidates' names, raw similarities, their maxima and (`standings`: a model reads them) the candidates'
  // standings: what score() and similarities() (training) both read.
  QuestionSimilarities similarities_of(const std::vector<Candidate>& candidates, bool standings) const;
  // `words`: the question's content words, for the late-interaction feature (none without). `pool`: the question's
  // pool when already found (pools()), else it is found here.
  std::vector<Candidate> candidates(const float* question, const float* lexical_question,
                                    const std::unordered_map<int64_t, float>* value_evidence,
                                    const QuestionWords* words, const Pool* pool = nullptr) const;
  // `tuned_question`: the question through the model's fine-tuned encoder top (required with one).
  // `value_evidence` and `words`: of the question's text (none without). `pool`: as for candidates().
  std::vector<DatabaseMatch> score(const float* question, const float* lexical_question, int k,
                                   const float* tuned_question = nullptr,
                                   const std::unordered_map<int64_t, float>* value_evidence = nullptr,
                                   const QuestionWords* words = nullptr, const Pool* pool = nullptr) const;
  EncodedQuestions encode_questions(const std::vector<std::string>& questions, const RowMatrix* vectors = nullptr) const;
  // Per question, its content words and (with SelectionOptions::synonyms and WordNet installed) their synonyms, each
  // new word encoded once (word_cache_). With `question_vectors`, the questions are encoded in the same encoder call,
  // into it.
  std::vector<QuestionWords> encode_words(const std::vector<std::string>& questions,
                                          RowMatrix* question_vectors = nullptr) const;
  // A question's rankings: of each part (question_parts.hpp), every candidate, or the question's best k when it has
  // one part; and beside sentence parts (not marked ones), the whole question's best database. The parts pick set
  // members and calibrate.
  struct PartRankings {
    std::vector<DatabaseMatch> whole;
    std::vector<std::vector<DatabaseMatch>> parts;
  };
  std::vector<PartRankings> rank_parts(const std::vector<std::string>& questions, int k) const;
  // The same for questions already split (split[i] of questions[i]).
  std::vector<PartRankings> rank_split(const std::vector<std::string>& questions,
                                       const std::vector<QuestionParts>& split, int k) const;
  // The same for questions given as their parts (select_parts), empty parts dropped.
  std::vector<PartRankings> rank_given_parts(const std::vector<std::vector<std::string>>& questions, int k) const;
  // select_set's choice from a question's rankings.
  std::vector<DatabaseMatch> chosen_set(const PartRankings& parts, bool at_least_one) const;
  // One ranking of at most k from a question's rankings: each one's scores are shifted so that its best database
  // scores as the best ranking's best one (the whole question's best first among them, then the parts' by their
  // probability), and a database keeps its highest shifted score and its highest probability (the probability
  // that it answers some part).
  static std::vector<DatabaseMatch> merge_parts(const PartRankings& parts, int k);
  void check_model(const RelevanceModel& model) const;
  // Whether per-table column counts (Entry::table_columns) fit a database of `tables` tables and `columns` columns:
  // none given, or one count >= 0 per table adding up to the columns.
  static bool table_columns_fit(const std::vector<int64_t>& table_columns, size_t tables, int64_t columns);

  std::shared_ptr<const Encoder> encoder_;
  std::shared_ptr<const Encoder> lexical_;
  SelectionOptions options_;
  std::shared_ptr<const RelevanceModel> model_;
  SelectionCalibration calibration_;
  VectorIndex cards_;
  VectorIndex tables_;
  VectorIndex columns_;
  VectorIndex forms_;  // question forms, stored as the columns are (SelectionOptions::column_dtype)
  ValuePostings values_;  // by card id
  QuantizedRows card_codes_;  // same ids as cards_, for the pool's approximate pass
  std::unique_ptr<VectorIndex> device_cards_;  // on a CUDA SelectionOptions::device: fp16 cards, same ids as cards_
  SparseVectors lexical_cards_;   // same ids as cards_
  SparseVectors lexical_tables_;  // same ids as tables_
  std::unique_ptr<LexicalCache> lexical_cache_ = std::make_unique<LexicalCache>();
  std::unique_ptr<HubnessCache> hubness_cache_ = std::make_unique<HubnessCache>();
  std::unique_ptr<WordCache> word_cache_ = std::make_unique<WordCache>();
  std::unique_ptr<std::shared_mutex> lock_ = std::make_unique<std::shared_mutex>();  // see the class comment
  std::map<std::string, Entry> entries_;
  std::unordered_map<int64_t, const std::string*> name_of_card_;
  std::unordered_map<int64_t, const Entry*> entry_of_card_;
  std::unordered_map<int64_t, const std::string*> name_of_table_;
  int64_t next_card_id_ = 0;
  int64_t next_table_id_ = 0;
  int64_t next_column_id_ = 0;
  int64_t next_form_id_ = 0;
};

}  // namespace relmem
