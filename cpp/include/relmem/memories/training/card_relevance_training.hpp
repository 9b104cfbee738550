#pragma once
// The card-cosine relevance classifier p(x, D) = sigmoid(a cos(E(x), E(card(D))) + b) on a BERT sentence encoder E
// whose top layers are fine-tuned with it: binary cross-entropy on (question, database) pairs of single and
// composite questions, negatives drawn as train_relevance draws them (a share of them the wrong databases the
// untrained encoder ranks highest). Questions and cards go through the same fine-tuned layers, so the result is one
// encoder that serves both sides; the frozen lower layers run once per text. The databases are split as
// train_relevance splits them: held-out databases' questions pick the best epoch and calibrate a and b.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/finetuning/bert_top.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/relevance/labeled_questions.hpp"
#include "relmem/memories/training/relevance_training.hpp"

namespace relmem {

struct CardRelevanceOptions {
  int finetune_layers = 1;           // top BERT layers trained; those below stay frozen
  int epochs = 3;
  float learning_rate = 2e-5f;       // Adam's rate for the encoder layers
  float head_learning_rate = 1e-2f;  // and for a and b
  float weight_decay = 0.0f;         // Adam's decoupled decay of the encoder layers toward their pretrained weights
  int batch = 32;                    // questions per step
  int max_composite = 3;
  float composite_ratio = 0.5f;
  int negatives = 4;                 // negative databases per positive pair
  float hard_fraction = 0.5f;
  int hard_pool = 10;
  float heldout_fraction = 0.1f;
  int64_t max_questions = 0;         // training questions (single and composite) drawn for the run; 0: all
  uint64_t seed = 0;
  int threads = 0;
};

struct CardRelevanceHead {
  float scale = 1.0f;  // a
  float bias = 0.0f;   // b
  float probability(float cosine) const;
};

// A (question, card) pair by rows of one matrix of unit vectors.
struct VectorPair {
  int first = 0;
  int second = 0;
  float label = 0.0f;
};

// Mean binary cross-entropy of sigmoid(a vectors[first]·vectors[second] + b) against the labels. Adds
// d(loss)/d(vectors) into d_vectors (same shape) and d(loss)/d(a, b) into d_head.
double pair_loss_and_gradient(const RowMatrix& vectors, const std::vector<VectorPair>& pairs,
                              const CardRelevanceHead& head, RowMatrix& d_vectors, double d_head[2]);

struct CardCalibration {
  int64_t questions = 0;              // held-out single questions
  double gold_probability_mean = 0.0;  // p of the right database
  double gold_at_least_0_8 = 0.0;      // share of them with p >= 0.8
  double wrong_max_mean = 0.0;         // mean over questions of the highest p of a wrong database
  double wrong_max_below_0_5 = 0.0;    // share of questions whose every wrong database has p < 0.5
};

struct CardRelevanceResult {
  BertTop top;  // the best held-out epoch's layers
  CardRelevanceHead head;  // calibrated on held-out questions
  std::vector<EpochReport> epochs;
  int best_epoch = 0;
  double untrained_recall_at_1 = 0.0, untrained_recall_at_5 = 0.0, untrained_all_in_top5 = 0.0;
  CardCalibration calibration;
  int64_t training_questions = 0;  // pairs' questions per epoch, composites included
  double question_tokens = 0.0, card_tokens = 0.0;  // mean word pieces per text, [CLS] and [SEP] included
  double encode_seconds = 0.0, train_seconds = 0.0;
  std::vector<std::string> heldout_databases;
  std::string training_info_json;
};

// `databases` are the whole training collection (their `card`s are what E reads); questions naming others are
// skipped.
CardRelevanceResult train_card_relevance(const BertEncoder& encoder, const std::vector<DatabaseTexts>& databases,
                                         const std::vector<LabeledQuestion>& questions,
                                         const CardRelevanceOptions& options,
                                         const std::function<void(const EpochReport&)>& progress = {});

// The fine-tuned encoder as a model directory (BertEncoder::save_with_top) with the head in relevance_head.json.
void save_card_relevance(const BertEncoder& encoder, const CardRelevanceResult& result, const std::string& dir);
CardRelevanceHead load_card_relevance_head(const std::string& dir);

}  // namespace relmem
