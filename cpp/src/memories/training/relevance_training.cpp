#include "relmem/memories/training/relevance_training.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "embedding_cache.hpp"
#include "relevance_corpus.hpp"
#include "training_split.hpp"
#include "training_steps.hpp"
#include "relmem/encoders/use_lite.hpp"

namespace relmem {
namespace {

using relevance::EncodedCollection;
using relevance::EncodedQuestions;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The fine-tuned encoder top: the frozen layers' token states of every question text (computed once), the
// trainable layers and their optimizer. forward() puts the batch's question vectors through the top; step()
// back-propagates the relevance loss's question gradient into it and updates it.
class EncoderTuning {
 public:
  EncoderTuning(const Encoder& encoder, const std::vector<std::string>& texts, const TrainingOptions& options)
      : states_(use_lite(encoder).token_states(texts, options.finetune_layers)),
        top_(use_lite(encoder).top(options.finetune_layers)),
        adam_(std::vector<float>(top_.parameters().size(), options.learning_rate * options.finetune_lr_scale),
              options.weight_decay, top_.parameters()),
        gradient_(top_.parameters().size(), 0.0f) {}

  void forward(const std::vector<int>& rows, RelevanceBatch& batch) {
    batch.questions = top_.forward(states_.select(rows), cache_);
  }
  void step(const RowMatrix& d_questions) {
    std::fill(gradient_.begin(), gradient_.end(), 0.0f);
    top_.backward(cache_, d_questions, gradient_);
    adam_.step(top_.parameters(), gradient_);
  }
  RowMatrix encode(const std::vector<int>& rows) const { return top_.encode(states_.select(rows)); }
  UseLiteTop& top() { return top_; }

 private:
  static const UseLiteEncoder& use_lite(const Encoder& encoder) {
    const auto* out = dynamic_cast<const UseLiteEncoder*>(&encoder);
    if (!out) throw Error("fine-tuning encoder layers needs the use-lite encoder, not '" + encoder.name() + "'");
    return *out;
  }

  TokenStates states_;
  UseLiteTop top_;
  training::Adam adam_;
  std::vector<float> gradient_;
  TopCache<float> cache_;
};

// Adam moves every weight by about the learning rate per step whatever its scale. The projections' entries are
// ~1/sqrt(d): they get a smaller rate, or they forget their cosine-preserving start at once. The direct path
// weighs cosines whose useful differences are ~0.01, so its weights must reach tens: it gets a larger rate.
std::vector<float> learning_rates(RelevanceModel& model, const TrainingOptions& options) {
  auto& parameters = model.parameters();
  std::vector<float> rates(parameters.values().size(), options.learning_rate);
  const float* base = parameters.values().data();
  auto scale = [&](const float* begin, int64_t count, float factor) {
    std::fill_n(rates.begin() + (begin - base), count, options.learning_rate * factor);
  };
  scale(parameters.question_projection().data(), parameters.question_projection().size(), options.projection_lr_scale);
  scale(parameters.database_projection().data(), parameters.database_projection().size(), options.projection_lr_scale);
  scale(parameters.scalar_weights().data(), parameters.scalar_weights().size(), options.direct_lr_scale);
  scale(&parameters.output_bias(), 1, options.direct_lr_scale);
  return rates;
}

// Training questions with their positive databases and the untrained memory's top-ranked wrong ones.
struct Example {
  int row = 0;  // in EncodedQuestions
  std::vector<int> hard;
};

class BatchBuilder {
 public:
  BatchBuilder(const EncodedCollection& collection, const EncodedQuestions& questions,
               const std::vector<int>& training_databases, const TrainingOptions& options)
      : collection_(collection), questions_(questions), training_databases_(training_databases), options_(options),
        local_(static_cast<size_t>(collection.size()), -1) {}

  RelevanceBatch build(const std::vector<const Example*>& examples, std::mt19937_64& rng) {
    RelevanceBatch batch;
    batch.listwise_weight = options_.listwise_weight;
    batch.bce_weight = options_.bce_weight;
    std::vector<int> databases;
    std::vector<int> question_rows;
    auto local_database = [&](int db) {
      if (local_[static_cast<size_t>(db)] < 0) {
        local_[static_cast<size_t>(db)] = static_cast<int>(databases.size());
        databases.push_back(db);
      }
      return local_[static_cast<size_t>(db)];
    };
    for (const Example* example : examples) {
      const int q = static_cast<int>(question_rows.size());
      question_rows.push_back(example->row);
      const auto& positives = questions_.databases[static_cast<size_t>(example->row)];
      std::vector<int> taken = positives;
      auto add_pair = [&](int db, float label) {
        batch.pairs.push_back({q, local_database(db), label, questions_.raw(example->row, db),
                               questions_.best[static_cast<size_t>(example->row)],
                               questions_.standing(example->row, db)});
      };
      // Pairs are what the memory scores: its candidates (a right database outside them cannot be ranked anyway).
      for (int db : positives)
        if (questions_.is_candidate(example->row, db)) add_pair(db, 1.0f);
      const size_t wanted = positives.size() * static_cast<size_t>(options_.negatives);
      for (size_t tries = 0; taken.size() < positives.size() + wanted && tries < 20 * wanted + 20; ++tries) {
        const bool hard = !example->hard.empty() && uniform_(rng) < options_.hard_fraction;
        const auto& pool = hard ? example->hard : training_databases_;
        const int db = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
        if (std::find(taken.begin(), taken.end(), db) != taken.end() || !questions_.is_candidate(example->row, db)) {
          continue;
        }
        taken.push_back(db);
        add_pair(db, 0.0f);
      }
    }
    const int64_t dim = collection_.cards.cols();
    batch.questions.resize(static_cast<int64_t>(question_rows.size()), dim);
    for (size_t i = 0; i < question_rows.size(); ++i)
      batch.questions.row(static_cast<int64_t>(i)) = questions_.vectors.row(question_rows[i]);
    batch.cards.resize(static_cast<int64_t>(databases.size()), dim);
    int64_t table_rows = 0;
    for (int db : databases) table_rows += collection_.table_offsets[db + 1] - collection_.table_offsets[db];
    batch.tables.resize(table_rows, dim);
    int64_t next = 0;
    for (size_t i = 0; i < databases.size(); ++i) {
      const int db = databases[i];
      batch.cards.row(static_cast<int64_t>(i)) = collection_.cards.row(db);
      const int first = collection_.table_offsets[db], count = collection_.table_offsets[db + 1] - first;
      batch.tables.middleRows(next, count) = collection_.tables.middleRows(first, count);
      next += count;
      batch.table_offsets.push_back(static_cast<int>(next));
      local_[static_cast<size_t>(db)] = -1;
    }
    return batch;
  }

 private:
  const EncodedCollection& collection_;
  const EncodedQuestions& questions_;
  const std::vector<int>& training_databases_;
  const TrainingOptions& options_;
  std::vector<int> local_;
  std::uniform_real_distribution<float> uniform_{0.0f, 1.0f};
};

void check_options(const TrainingOptions& o) {
  if (o.epochs < 1 || o.batch < 1 || o.negatives < 1 || o.hard_pool < 1 || o.max_composite < 1) {
    throw Error("training: epochs, batch, negatives, hard_pool and max_composite must be >= 1");
  }
  if (!(o.learning_rate > 0.0f) || !(o.heldout_fraction >= 0.0f && o.heldout_fraction < 1.0f) ||
      !(o.hard_fraction >= 0.0f && o.hard_fraction <= 1.0f) || !(o.composite_ratio >= 0.0f) ||
      !(o.weight_decay >= 0.0f) || !(o.projection_lr_scale >= 0.0f) || !(o.direct_lr_scale >= 0.0f) ||
      !(o.finetune_lr_scale >= 0.0f) || !(o.listwise_weight >= 0.0f) || !(o.bce_weight >= 0.0f) ||
      !(o.bce_weight > 0.0f || o.listwise_weight > 0.0f)) {
    throw Error("training: learning rate must be > 0, held-out and hard fractions in [0, 1), ratios and weights >= 0, "
                "and the BCE or the listwise weight > 0");
  }
  if (o.finetune_layers < 0 || o.finetune_layers > 2) {
    throw Error("training: finetune_layers must be 0 (frozen encoder), 1 or 2 (USE-lite has 2 layers)");
  }
}

std::string training_info(const TrainingOptions& o, const TrainingResult& r, int64_t train_questions,
                          int64_t train_composites, int databases) {
  std::ostringstream s;
  s << "{\"epochs\":" << o.epochs << ",\"best_epoch\":" << r.best_epoch << ",\"learning_rate\":" << o.learning_rate
    << ",\"batch\":" << o.batch << ",\"max_composite\":" << o.max_composite
    << ",\"composite_ratio\":" << o.composite_ratio << ",\"negatives\":" << o.negatives
    << ",\"hard_fraction\":" << o.hard_fraction << ",\"heldout_fraction\":" << o.heldout_fraction
    << ",\"weight_decay\":" << o.weight_decay << ",\"listwise_weight\":" << o.listwise_weight
    << ",\"bce_weight\":" << o.bce_weight << ",\"hard_pool\":" << o.hard_pool
    << ",\"projection_lr_scale\":" << o.projection_lr_scale
    << ",\"direct_lr_scale\":" << o.direct_lr_scale << ",\"finetune_layers\":" << o.finetune_layers
    << ",\"finetune_lr_scale\":" << o.finetune_lr_scale << ",\"seed\":" << o.seed << ",\"databases\":" << databases
    << ",\"training_questions\":" << train_questions << ",\"training_composites\":" << train_composites
    << ",\"heldout_databases\":" << r.heldout_databases.size() << ",\"heldout_f1\":" << r.heldout_set.f1
    << ",\"heldout_database_names\":" << nlohmann::json(r.heldout_databases).dump();
  if (!r.epochs.empty()) {
    const auto& best = r.epochs[static_cast<size_t>(r.best_epoch - 1)];
    s << ",\"heldout_recall_at_1\":" << best.heldout_recall_at_1 << ",\"heldout_recall_at_5\":"
      << best.heldout_recall_at_5;
  }
  s << "}";
  return s.str();
}

// Centers the initial logits between the positive pairs and the hard negatives, so the direct path's cosine
// ranking starts near probability 0.5 at the boundary whatever the encoders' typical cosines.
float initial_bias(const RelevanceModel& model, const EncodedQuestions& questions, const std::vector<Example>& examples) {
  const auto& w = model.parameters().scalar_weights();
  auto direct = [&](int row, int db) {  // the projected cosines start close to the raw ones
    const RawSimilarities raw = questions.raw(row, db);
    const float cosines =
        (w[0] + w[3]) * raw.card + (w[1] + w[4]) * raw.table + w[5] * raw.lexical_card + w[6] * raw.lexical_table;
    const bool lexical = !model.config().lexical_encoder.empty();
    return cosines + w[11] * raw.column + w[12] * raw.value +
           w[15] * untrained_score(SimilarityFusion::Mean, raw, lexical);  // a fresh model has 21 features
  };
  double positive = 0.0, negative = 0.0;
  int64_t positives = 0, negatives = 0;
  for (const auto& example : examples) {
    for (int db : questions.databases[static_cast<size_t>(example.row)]) {
      positive += direct(example.row, db);
      ++positives;
    }
    for (int db : example.hard) {
      negative += direct(example.row, db);
      ++negatives;
    }
  }
  if (!positives || !negatives) return 0.0f;
  return static_cast<float>(-0.5 * (positive / static_cast<double>(positives) + negative / static_cast<double>(negatives)));
}

}  // namespace

TrainingResult train_relevance(const Encoder& encoder, const Encoder* lexical, const std::vector<DatabaseTexts>& databases,
                               const std::vector<LabeledQuestion>& questions, const TrainingOptions& options,
                               const std::function<void(const EpochReport&)>& progress) {
  check_options(options);
  if (databases.size() < 2) throw Error("training needs at least two databases");
  training::ThreadScope threads(options.threads);
  auto multiplier = gpu::make_matrix_multiplier(options.device);
  std::mt19937_64 rng(options.seed);
  TrainingResult result;

  std::vector<std::string> names;
  for (const auto& db : databases) names.push_back(db.name);
  training::TrainingSplit split = training::split_training_data(names, questions, options.heldout_fraction,
                                                                options.max_composite, options.composite_ratio, rng);
  const auto& index_of = split.index_of;
  const std::vector<int>& training_databases = split.training_databases;
  result.heldout_databases = split.heldout_databases;
  const int64_t train_questions = split.train_singles;
  const std::vector<LabeledQuestion>& train_set = split.train;
  const size_t heldout_begin = train_set.size();
  std::vector<LabeledQuestion> all = train_set;
  all.insert(all.end(), split.heldout_questions.begin(), split.heldout_questions.end());

  const auto encode_start = Clock::now();
  const EncodedCollection collection = relevance::encode_collection(encoder, lexical, databases, options.cache_dir);
  std::vector<std::string> texts;
  std::vector<std::vector<int>> labels;
  for (const auto& q : all) {
    texts.push_back(q.text);
    std::vector<int> dbs;
    for (const auto& name : q.databases) dbs.push_back(index_of.at(name));
    labels.push_back(std::move(dbs));
  }
  const EncodedQuestions encoded =
      relevance::encode_questions(encoder, texts, std::move(labels), collection, options.cache_dir);
  std::unique_ptr<EncoderTuning> tuning;
  if (options.finetune_layers > 0) tuning = std::make_unique<EncoderTuning>(encoder, texts, options);
  result.encode_seconds = seconds_since(encode_start);

  // Held-out questions are ranked against every database (training ones included), as in deployment.
  const int64_t heldout_rows = encoded.vectors.rows() - static_cast<int64_t>(heldout_begin);
  const EncodedQuestions heldout_encoded = encoded.bottom_rows(heldout_rows);
  std::vector<int> heldout_texts(static_cast<size_t>(heldout_rows));
  std::iota(heldout_texts.begin(), heldout_texts.end(), static_cast<int>(heldout_begin));
  // The held-out questions as the model sees them: through the fine-tuned top when there is one.
  auto heldout_logits = [&](const RelevanceModel& m) {
    if (!tuning) return relevance::model_logits(m, collection, heldout_encoded);
    EncodedQuestions tuned = heldout_encoded;
    tuned.vectors = tuning->encode(heldout_texts);
    return relevance::model_logits(m, collection, tuned);
  };
  if (heldout_rows > 0) {
    const auto untrained = relevance::heldout_metrics(
        relevance::fused_scores(heldout_encoded, options.fusion, collection.lexical()), heldout_encoded.databases);
    result.untrained_recall_at_1 = untrained.recall_at_1;
    result.untrained_recall_at_5 = untrained.recall_at_5;
    result.untrained_all_in_top5 = untrained.all_in_top5;
  }

  // Hard negatives: the training databases the untrained memory ranks highest, minus the right ones.
  std::vector<Example> examples(heldout_begin);
  const RowMatrix fused = relevance::fused_scores(encoded, options.fusion, collection.lexical());
  for (size_t i = 0; i < heldout_begin; ++i) {
    examples[i].row = static_cast<int>(i);
    std::vector<int> ranked = training_databases;
    const auto& gold = encoded.databases[i];
    ranked.erase(std::remove_if(ranked.begin(), ranked.end(),
                                [&](int db) {
                                  return std::find(gold.begin(), gold.end(), db) != gold.end() ||
                                         !encoded.is_candidate(static_cast<int64_t>(i), db);
                                }),
                 ranked.end());
    const size_t keep = std::min<size_t>(static_cast<size_t>(options.hard_pool), ranked.size());
    const auto row = fused.row(static_cast<int64_t>(i));
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<int64_t>(keep), ranked.end(),
                      [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    ranked.resize(keep);
    examples[i].hard = std::move(ranked);
  }

  RelevanceConfig config;
  config.input_dim = encoder.dim();
  config.projection_dim = options.projection_dim;
  config.hidden_dim = options.hidden_dim;
  config.encoder = encoder.name();
  config.lexical_encoder = lexical ? lexical->name() : "";
  RelevanceModel model(config, options.seed);
  model.parameters().output_bias() = initial_bias(model, encoded, examples);
  RelevanceParameters gradient(config);
  training::Adam adam(learning_rates(model, options), options.weight_decay, model.parameters().values());
  BatchBuilder builder(collection, encoded, training_databases, options);
  std::vector<float> best_values = model.parameters().values();
  std::vector<float> best_top = tuning ? tuning->top().parameters() : std::vector<float>();
  RowMatrix d_questions;
  double best_score = -1.0;

  const auto train_start = Clock::now();
  std::vector<const Example*> shuffled;
  for (const auto& e : examples) shuffled.push_back(&e);
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    double loss_sum = 0.0;
    int64_t steps = 0;
    for (size_t begin = 0; begin < shuffled.size(); begin += static_cast<size_t>(options.batch)) {
      const size_t end = std::min(shuffled.size(), begin + static_cast<size_t>(options.batch));
      const std::vector<const Example*> chosen(shuffled.begin() + static_cast<int64_t>(begin),
                                               shuffled.begin() + static_cast<int64_t>(end));
      RelevanceBatch batch = builder.build(chosen, rng);
      if (tuning) {
        std::vector<int> rows;  // batch question i is chosen[i]
        for (const Example* example : chosen) rows.push_back(example->row);
        tuning->forward(rows, batch);
      }
      gradient.set_zero();
      loss_sum += model.loss_and_gradient(batch, gradient, *multiplier, tuning ? &d_questions : nullptr);
      adam.step(model.parameters().values(), gradient.values());
      if (tuning) tuning->step(d_questions);
      ++steps;
    }
    EpochReport report;
    report.epoch = epoch;
    report.loss = loss_sum / static_cast<double>(std::max<int64_t>(steps, 1));
    double score;  // without held-out data the last epoch wins
    if (heldout_rows > 0) {
      const auto metrics = relevance::heldout_metrics(heldout_logits(model), heldout_encoded.databases);
      report.heldout_recall_at_1 = metrics.recall_at_1;
      report.heldout_recall_at_5 = metrics.recall_at_5;
      report.heldout_all_in_top5 = metrics.all_in_top5;
      score = metrics.recall_at_1 + metrics.recall_at_5 + metrics.all_in_top5;
    } else {
      score = static_cast<double>(epoch);
    }
    report.seconds = seconds_since(epoch_start);
    result.epochs.push_back(report);
    if (score > best_score) {
      best_score = score;
      best_values = model.parameters().values();
      if (tuning) best_top = tuning->top().parameters();
      result.best_epoch = epoch;
    }
    if (progress) progress(report);
  }
  result.train_seconds = seconds_since(train_start);
  model.parameters().values() = best_values;
  if (tuning) {
    tuning->top().parameters() = best_top;
    model.set_encoder_top(tuning->top());
  }

  if (heldout_rows > 0) {
    RowMatrix probabilities = heldout_logits(model);
    probabilities = probabilities.unaryExpr([](float logit) { return sigmoid(logit); });
    const auto scored = relevance::scored_questions(probabilities, heldout_encoded.databases, 10);
    model.set_threshold(best_threshold(scored));
    result.heldout_set = set_metrics(scored, model.threshold());
  }
  model.set_training_info_json(training_info(options, result, train_questions,
                                             split.train_composites,
                                             static_cast<int>(databases.size())));
  result.model = std::move(model);
  return result;
}

RowMatrix training_logits(const RelevanceModel& model, const Encoder& encoder, const Encoder* lexical,
                          const std::vector<DatabaseTexts>& databases, const std::vector<std::string>& questions) {
  const EncodedCollection collection = relevance::encode_collection(encoder, lexical, databases, "");
  const EncodedQuestions encoded = relevance::encode_questions(
      encoder, questions, std::vector<std::vector<int>>(questions.size()), collection, "");
  return relevance::model_logits(model, collection, encoded);
}

}  // namespace relmem
