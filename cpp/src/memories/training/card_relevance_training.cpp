#include "relmem/memories/training/card_relevance_training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "../../common/json_file.hpp"
#include "relevance_corpus.hpp"
#include "training_split.hpp"
#include "training_steps.hpp"

namespace relmem {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double stable_sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }

// -y log p - (1 - y) log(1 - p) of p = sigmoid(logit), without overflow.
double bce(double logit, double label) { return std::max(logit, 0.0) - logit * label + std::log1p(std::exp(-std::abs(logit))); }

// The `count` databases of `candidates` with the highest scores, minus the excluded ones.
std::vector<int> top_wrong(const float* scores, const std::vector<int>& candidates, const std::vector<int>& excluded,
                           int count) {
  std::vector<int> ranked;
  for (int db : candidates)
    if (std::find(excluded.begin(), excluded.end(), db) == excluded.end()) ranked.push_back(db);
  const size_t keep = std::min<size_t>(static_cast<size_t>(count), ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<int64_t>(keep), ranked.end(),
                    [&](int a, int b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  ranked.resize(keep);
  return ranked;
}

// One question's labelled databases: its right ones, then negatives per right one, a share of them hard.
std::vector<std::pair<int, float>> draw_pairs(const std::vector<int>& gold, const std::vector<int>& hard,
                                              const std::vector<int>& pool, const CardRelevanceOptions& options,
                                              std::mt19937_64& rng) {
  std::vector<std::pair<int, float>> out;
  std::vector<int> taken = gold;
  for (int db : gold) out.emplace_back(db, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  const size_t wanted = gold.size() * static_cast<size_t>(options.negatives);
  for (size_t tries = 0; taken.size() < gold.size() + wanted && tries < 20 * wanted + 20; ++tries) {
    const bool is_hard = !hard.empty() && uniform(rng) < options.hard_fraction;
    const auto& from = is_hard ? hard : pool;
    const int db = from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
    if (std::find(taken.begin(), taken.end(), db) != taken.end()) continue;
    taken.push_back(db);
    out.emplace_back(db, 0.0f);
  }
  return out;
}

// Logistic regression of the labels on the cosines by Newton's method, from `start`.
CardRelevanceHead fit_head(const std::vector<std::pair<float, float>>& cosine_labels, CardRelevanceHead start) {
  double a = start.scale, b = start.bias;
  for (int iteration = 0; iteration < 50; ++iteration) {
    double ga = 0, gb = 0, haa = 0, hab = 0, hbb = 0;
    for (const auto& [x, y] : cosine_labels) {
      const double p = stable_sigmoid(a * x + b), w = p * (1 - p);
      ga += (p - y) * x;
      gb += p - y;
      haa += w * x * x;
      hab += w * x;
      hbb += w;
    }
    const double det = haa * hbb - hab * hab;
    if (!(det > 1e-12)) break;
    const double da = (hbb * ga - hab * gb) / det, db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (std::abs(da) < 1e-6 && std::abs(db) < 1e-6) break;
  }
  return {static_cast<float>(a), static_cast<float>(b)};
}

RowMatrix cosines(const RowMatrix& questions, const RowMatrix& cards) { return questions * cards.transpose(); }

}  // namespace

float CardRelevanceHead::probability(float cosine) const {
  return static_cast<float>(stable_sigmoid(static_cast<double>(scale) * cosine + bias));
}

double pair_loss_and_gradient(const RowMatrix& vectors, const std::vector<VectorPair>& pairs,
                              const CardRelevanceHead& head, RowMatrix& d_vectors, double d_head[2]) {
  if (pairs.empty()) return 0.0;
  if (d_vectors.rows() != vectors.rows() || d_vectors.cols() != vectors.cols()) {
    throw Error("pair loss: the gradient's shape differs from the vectors'");
  }
  const double inverse = 1.0 / static_cast<double>(pairs.size());
  double loss = 0.0;
  for (const auto& pair : pairs) {
    if (pair.first < 0 || pair.second < 0 || pair.first >= vectors.rows() || pair.second >= vectors.rows()) {
      throw Error("pair loss: a pair names a row outside the vectors");
    }
    const double cosine = vectors.row(pair.first).dot(vectors.row(pair.second));
    const double logit = head.scale * cosine + head.bias;
    loss += bce(logit, pair.label);
    const double d_logit = (stable_sigmoid(logit) - pair.label) * inverse;
    d_head[0] += d_logit * cosine;
    d_head[1] += d_logit;
    const float d_cosine = static_cast<float>(d_logit * head.scale);
    d_vectors.row(pair.first) += d_cosine * vectors.row(pair.second);
    d_vectors.row(pair.second) += d_cosine * vectors.row(pair.first);
  }
  return loss * inverse;
}

CardRelevanceResult train_card_relevance(const BertEncoder& encoder, const std::vector<DatabaseTexts>& databases,
                                         const std::vector<LabeledQuestion>& questions,
                                         const CardRelevanceOptions& options,
                                         const std::function<void(const EpochReport&)>& progress) {
  if (options.epochs < 1 || options.batch < 1 || options.negatives < 1 || options.hard_pool < 1 ||
      options.max_composite < 1 || options.max_questions < 0) {
    throw Error("training: epochs, batch, negatives, hard_pool and max_composite must be >= 1, max_questions >= 0");
  }
  if (!(options.learning_rate > 0.0f) || !(options.head_learning_rate >= 0.0f) || !(options.weight_decay >= 0.0f) ||
      !(options.heldout_fraction > 0.0f && options.heldout_fraction < 1.0f) ||
      !(options.hard_fraction >= 0.0f && options.hard_fraction <= 1.0f) || !(options.composite_ratio >= 0.0f)) {
    throw Error("training: learning rates must be positive, the weight decay >= 0, the held-out fraction in (0, 1), "
                "the hard fraction in [0, 1] and the composite ratio >= 0");
  }
  if (databases.size() < 4) throw Error("training needs at least four databases");
  training::ThreadScope threads(options.threads);
  std::mt19937_64 rng(options.seed);
  CardRelevanceResult result;

  std::vector<std::string> names;
  for (const auto& db : databases) names.push_back(db.name);
  training::TrainingSplit split = training::split_training_data(
      names, questions, options.heldout_fraction, options.max_composite, options.composite_ratio, rng);
  result.heldout_databases = split.heldout_databases;
  if (options.max_questions > 0 && static_cast<int64_t>(split.train.size()) > options.max_questions) {
    std::shuffle(split.train.begin(), split.train.end(), rng);
    split.train.resize(static_cast<size_t>(options.max_questions));
  }
  if (split.heldout_questions.empty()) throw Error("training: no question names a held-out database");
  result.training_questions = static_cast<int64_t>(split.train.size());

  // One text list: training questions, held-out questions, then every database's card.
  std::vector<std::string> texts;
  std::vector<std::vector<int>> gold;
  for (const auto* side : {&split.train, &split.heldout_questions}) {
    for (const auto& q : *side) {
      texts.push_back(q.text);
      std::vector<int> dbs;
      for (const auto& name : q.databases) dbs.push_back(split.index_of.at(name));
      gold.push_back(std::move(dbs));
    }
  }
  const int train_count = static_cast<int>(split.train.size());
  const int question_count = static_cast<int>(texts.size());
  for (const auto& db : databases) texts.push_back(db.card);
  const int card_row = question_count;  // card of database i: row card_row + i

  const auto encode_start = Clock::now();
  BertTop top = encoder.top(options.finetune_layers);
  const TokenStates states = encoder.token_states(texts, options.finetune_layers);
  result.encode_seconds = seconds_since(encode_start);
  result.question_tokens = static_cast<double>(states.offsets[question_count]) / question_count;
  result.card_tokens =
      static_cast<double>(states.offsets.back() - states.offsets[question_count]) / static_cast<double>(databases.size());

  std::vector<int> heldout_rows(static_cast<size_t>(question_count - train_count)), card_rows(databases.size());
  std::iota(heldout_rows.begin(), heldout_rows.end(), train_count);
  std::iota(card_rows.begin(), card_rows.end(), card_row);
  const std::vector<std::vector<int>> heldout_gold(gold.begin() + train_count, gold.end());
  auto heldout_scores = [&](const BertTop& t) {
    return cosines(t.encode(states.select(heldout_rows)), t.encode(states.select(card_rows)));
  };
  std::vector<int> all_databases(databases.size());
  std::iota(all_databases.begin(), all_databases.end(), 0);

  // Hard negatives from the untrained encoder: training questions against training databases.
  std::vector<std::vector<int>> hard(static_cast<size_t>(train_count));
  {
    std::vector<int> train_rows(static_cast<size_t>(train_count));
    std::iota(train_rows.begin(), train_rows.end(), 0);
    const RowMatrix scores = cosines(top.encode(states.select(train_rows)), top.encode(states.select(card_rows)));
    for (int q = 0; q < train_count; ++q) {
      hard[static_cast<size_t>(q)] =
          top_wrong(scores.row(q).data(), split.training_databases, gold[static_cast<size_t>(q)], options.hard_pool);
    }
    std::vector<std::pair<float, float>> cosine_labels;  // the head starts fitted to the untrained cosines
    for (int q = 0; q < train_count; ++q) {
      for (const auto& [db, label] :
           draw_pairs(gold[static_cast<size_t>(q)], hard[static_cast<size_t>(q)], split.training_databases, options, rng)) {
        cosine_labels.emplace_back(scores(q, db), label);
      }
    }
    result.head = fit_head(cosine_labels, {10.0f, -5.0f});
  }
  const auto untrained = relevance::heldout_metrics(heldout_scores(top), heldout_gold);
  result.untrained_recall_at_1 = untrained.recall_at_1;
  result.untrained_recall_at_5 = untrained.recall_at_5;
  result.untrained_all_in_top5 = untrained.all_in_top5;

  training::Adam adam(std::vector<float>(top.parameters().size(), options.learning_rate), options.weight_decay,
                      top.parameters());
  training::Adam head_adam(std::vector<float>(2, options.head_learning_rate), 0.0f, {0.0f, 0.0f});
  std::vector<float> gradient(top.parameters().size()), head_values(2), head_gradient(2);
  BertTop best_top = top;
  CardRelevanceHead best_head = result.head;
  double best_score = -1.0;
  std::vector<int> order(static_cast<size_t>(train_count));
  std::iota(order.begin(), order.end(), 0);
  BertTopCache<float> cache;
  const auto train_start = Clock::now();
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    std::shuffle(order.begin(), order.end(), rng);
    double loss_sum = 0.0;
    int64_t steps = 0;
    for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(options.batch)) {
      const size_t end = std::min(order.size(), begin + static_cast<size_t>(options.batch));
      std::vector<int> rows(order.begin() + static_cast<int64_t>(begin), order.begin() + static_cast<int64_t>(end));
      const int batch_questions = static_cast<int>(rows.size());
      std::vector<int> local(databases.size(), -1);
      std::vector<VectorPair> pairs;
      for (int i = 0; i < batch_questions; ++i) {
        const auto q = static_cast<size_t>(rows[static_cast<size_t>(i)]);
        for (const auto& [db, label] : draw_pairs(gold[q], hard[q], split.training_databases, options, rng)) {
          if (local[static_cast<size_t>(db)] < 0) {
            local[static_cast<size_t>(db)] = static_cast<int>(rows.size());
            rows.push_back(card_row + db);
          }
          pairs.push_back({i, local[static_cast<size_t>(db)], label});
        }
      }
      const RowMatrix vectors = top.forward(states.select(rows), cache);
      RowMatrix d_vectors = RowMatrix::Zero(vectors.rows(), vectors.cols());
      double d_head[2] = {0.0, 0.0};
      loss_sum += pair_loss_and_gradient(vectors, pairs, result.head, d_vectors, d_head);
      std::fill(gradient.begin(), gradient.end(), 0.0f);
      top.backward(cache, d_vectors, gradient);
      adam.step(top.parameters(), gradient);
      head_values = {result.head.scale, result.head.bias};
      head_gradient = {static_cast<float>(d_head[0]), static_cast<float>(d_head[1])};
      head_adam.step(head_values, head_gradient);
      result.head = {head_values[0], head_values[1]};
      ++steps;
    }
    EpochReport report;
    report.epoch = epoch;
    report.loss = loss_sum / static_cast<double>(std::max<int64_t>(steps, 1));
    const auto metrics = relevance::heldout_metrics(heldout_scores(top), heldout_gold);
    report.heldout_recall_at_1 = metrics.recall_at_1;
    report.heldout_recall_at_5 = metrics.recall_at_5;
    report.heldout_all_in_top5 = metrics.all_in_top5;
    report.seconds = seconds_since(epoch_start);
    result.epochs.push_back(report);
    const double score = metrics.recall_at_1 + metrics.recall_at_5 + metrics.all_in_top5;
    if (score > best_score) {
      best_score = score;
      best_top = top;
      best_head = result.head;
      result.best_epoch = epoch;
    }
    if (progress) progress(report);
  }
  result.train_seconds = seconds_since(train_start);
  result.top = std::move(best_top);

  // Calibration: a and b refitted on held-out pairs drawn as training draws them (hard ones among all databases).
  const RowMatrix scores = heldout_scores(result.top);
  std::vector<std::pair<float, float>> cosine_labels;
  for (int64_t q = 0; q < scores.rows(); ++q) {
    const auto& right = heldout_gold[static_cast<size_t>(q)];
    const auto hardest = top_wrong(scores.row(q).data(), all_databases, right, options.hard_pool);
    for (const auto& [db, label] : draw_pairs(right, hardest, all_databases, options, rng)) {
      cosine_labels.emplace_back(scores(q, db), label);
    }
  }
  result.head = fit_head(cosine_labels, best_head);
  CardCalibration& c = result.calibration;
  for (int64_t q = 0; q < scores.rows(); ++q) {
    const auto& right = heldout_gold[static_cast<size_t>(q)];
    if (right.size() != 1) continue;
    float wrong = 0.0f;
    for (int db : all_databases)
      if (db != right[0]) wrong = std::max(wrong, result.head.probability(scores(q, db)));
    const float p = result.head.probability(scores(q, right[0]));
    ++c.questions;
    c.gold_probability_mean += p;
    c.gold_at_least_0_8 += p >= 0.8f;
    c.wrong_max_mean += wrong;
    c.wrong_max_below_0_5 += wrong < 0.5f;
  }
  if (c.questions > 0) {
    const double n = static_cast<double>(c.questions);
    c.gold_probability_mean /= n;
    c.gold_at_least_0_8 /= n;
    c.wrong_max_mean /= n;
    c.wrong_max_below_0_5 /= n;
  }

  nlohmann::json info = {{"classifier", "card-cosine"},
                         {"finetune_layers", options.finetune_layers},
                         {"epochs", options.epochs},
                         {"best_epoch", result.best_epoch},
                         {"learning_rate", options.learning_rate},
                         {"head_learning_rate", options.head_learning_rate},
                         {"weight_decay", options.weight_decay},
                         {"batch", options.batch},
                         {"max_composite", options.max_composite},
                         {"composite_ratio", options.composite_ratio},
                         {"negatives", options.negatives},
                         {"hard_fraction", options.hard_fraction},
                         {"hard_pool", options.hard_pool},
                         {"heldout_fraction", options.heldout_fraction},
                         {"max_questions", options.max_questions},
                         {"seed", options.seed},
                         {"training_questions", result.training_questions},
                         {"databases", databases.size()},
                         {"heldout_database_names", result.heldout_databases}};
  if (!result.epochs.empty()) {
    const auto& best = result.epochs[static_cast<size_t>(result.best_epoch - 1)];
    info["heldout_recall_at_1"] = best.heldout_recall_at_1;
    info["heldout_recall_at_5"] = best.heldout_recall_at_5;
  }
  result.training_info_json = info.dump();
  return result;
}

void save_card_relevance(const BertEncoder& encoder, const CardRelevanceResult& result, const std::string& dir) {
  encoder.save_with_top(result.top, dir);
  const nlohmann::json head = {{"classifier", "card-cosine"},
                               {"scale", result.head.scale},
                               {"bias", result.head.bias},
                               {"training", nlohmann::json::parse(result.training_info_json)}};
  std::ofstream out(std::filesystem::path(dir) / "relevance_head.json");
  out << head.dump(2) << "\n";
  if (!out) throw Error("cannot write " + dir + "/relevance_head.json");
}

CardRelevanceHead load_card_relevance_head(const std::string& dir) {
  const std::string file = (std::filesystem::path(dir) / "relevance_head.json").string();
  const nlohmann::json json = read_json_file(file);
  if (!json.is_object() || !json.contains("scale") || !json["scale"].is_number() || !json.contains("bias") ||
      !json["bias"].is_number()) {
    throw Error(file + ": expected an object with numbers 'scale' and 'bias'");
  }
  return {json["scale"].get<float>(), json["bias"].get<float>()};
}

}  // namespace relmem
