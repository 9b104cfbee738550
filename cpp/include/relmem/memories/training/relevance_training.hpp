#pragma once
// Trains a RelevanceModel with binary cross-entropy on (question, database) pairs: positives from labelled
// questions and composite questions (several databases each), negatives by swapping in other databases, half of
// them hard (wrong databases the untrained memory ranks high). Databases are split into training and held-out
// ones; the held-out questions pick the best epoch and calibrate the set-selection threshold. Every text is
// encoded once per run; with finetune_layers, the questions' frozen lower layers too, and each batch's questions go
// forward and backward through the fine-tuned top. Deterministic for a given seed and thread count.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "relmem/encoders/encoder.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/relevance/labeled_questions.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"
#include "relmem/memories/relevance/selection_calibration.hpp"
#include "relmem/memories/relevance/similarity_fusion.hpp"

namespace relmem {

struct TrainingOptions {
  int epochs = 6;
  float learning_rate = 2e-3f;
  int batch = 32;                  // questions per Adam step
  int max_composite = 3;           // K: composite questions join 2..K questions from different databases
  float composite_ratio = 0.5f;    // composite questions per ordinary training question
  int negatives = 4;               // negative databases per positive pair
  float hard_fraction = 0.5f;      // share of negatives drawn from the untrained memory's top-ranked wrong ones
  int hard_pool = 10;              // how many top-ranked wrong databases count as hard
  float heldout_fraction = 0.1f;   // share of databases (with their questions) kept out of training
  float weight_decay = 0.0f;       // decoupled decay of every weight toward its initial value
  float listwise_weight = 0.0f;    // weight of the listwise (softmax) term beside BCE (RelevanceBatch)
  float bce_weight = 1.0f;         // weight of BCE (RelevanceBatch; 0 with a listwise term: ranking alone)
  float projection_lr_scale = 0.05f;  // the projections' learning rate relative to learning_rate
  float direct_lr_scale = 20.0f;      // the direct path's (ws, b2) learning rate relative to learning_rate
  int projection_dim = 256;
  int hidden_dim = 32;
  uint64_t seed = 0;
  int threads = 0;                 // 0: OpenMP's default
  std::string device = "cpu";      // "cpu" or "cuda[:N]" for the matrix products
  SimilarityFusion fusion = SimilarityFusion::Mean;  // how the untrained memory ranks, for hard negatives
  std::string cache_dir;           // when set, embeddings are cached there across runs (keyed by encoder + texts)
  // USE-lite top transformer layers fine-tuned end to end on the question side (0: the encoder stays frozen; 1: the
  // top layer; 2: both), with the tanh head, at learning_rate x finetune_lr_scale.
  int finetune_layers = 0;
  float finetune_lr_scale = 0.01f;
};

struct EpochReport {
  int epoch = 0;
  double loss = 0.0;                 // mean training BCE over the epoch
  double heldout_recall_at_1 = 0.0;  // held-out single questions, ranked against every database
  double heldout_recall_at_5 = 0.0;
  double heldout_all_in_top5 = 0.0;  // held-out composite questions
  double seconds = 0.0;
};

struct TrainingResult {
  RelevanceModel model;  // parameters of the best held-out epoch, threshold calibrated on held-out questions
  std::vector<EpochReport> epochs;
  int best_epoch = 0;
  SetMetrics heldout_set;       // set selection on held-out questions at the calibrated threshold
  double untrained_recall_at_1 = 0.0;  // the untrained memory on the same held-out questions
  double untrained_recall_at_5 = 0.0;
  double untrained_all_in_top5 = 0.0;
  double encode_seconds = 0.0;
  double train_seconds = 0.0;
  std::vector<std::string> heldout_databases;
};

// `databases` are the whole training collection; questions naming other databases are skipped. `lexical` (may be
// null) is the lexical encoder whose cosines become features 5 and 6. `progress` is called after every epoch.
TrainingResult train_relevance(const Encoder& encoder, const Encoder* lexical, const std::vector<DatabaseTexts>& databases,
                               const std::vector<LabeledQuestion>& questions, const TrainingOptions& options,
                               const std::function<void(const EpochReport&)>& progress = {});

// The logits training computes for `questions` against `databases` (question rows, database columns in order;
// -infinity where a database is not among the question's candidates), through the trainer's own code path. A
// SelectionMemory holding the same databases and the model scores every question the same.
RowMatrix training_logits(const RelevanceModel& model, const Encoder& encoder, const Encoder* lexical,
                          const std::vector<DatabaseTexts>& databases, const std::vector<std::string>& questions);

}  // namespace relmem
