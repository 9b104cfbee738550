#include "relmem/memories/relevance/selection_calibration.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "relmem/common.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"

namespace relmem {
namespace {
constexpr int kNewtonSteps = 50;
constexpr double kDamping = 1e-3;
constexpr size_t kMaxThresholds = 2000;
}  // namespace

float PlattScaling::probability(float score, float lead_over_others, float best) const {
  const float ranked = sigmoid(scale * score + lead * lead_over_others + bias);
  return gated ? sigmoid(gate_scale * best + gate_bias) * ranked : ranked;
}

namespace {

struct Example {
  double x[2] = {0.0, 0.0};  // the features; the bias is implicit
  bool positive = false;
  double weight = 1.0;
};

// Weights of `features` features and a bias (last), by damped Newton steps from (1, 0, ..., 0).
Eigen::VectorXd fit_logistic(const std::vector<Example>& examples, int features) {
  const int n = features + 1;
  Eigen::VectorXd w = Eigen::VectorXd::Zero(n), x(n);
  w(0) = 1.0;
  for (int step = 0; step < kNewtonSteps; ++step) {
    Eigen::VectorXd gradient = kDamping * w;  // the bias is not damped
    Eigen::MatrixXd hessian = kDamping * Eigen::MatrixXd::Identity(n, n);
    gradient(n - 1) = 0.0;
    hessian(n - 1, n - 1) = 1e-9;
    for (const auto& e : examples) {
      for (int f = 0; f < features; ++f) x(f) = e.x[f];
      x(n - 1) = 1.0;
      const double p = 1.0 / (1.0 + std::exp(-w.dot(x)));
      gradient += e.weight * (p - (e.positive ? 1.0 : 0.0)) * x;
      hessian.noalias() += e.weight * p * (1.0 - p) * x * x.transpose();
    }
    const Eigen::VectorXd delta = hessian.ldlt().solve(gradient);
    if (!delta.allFinite()) break;
    w -= delta;
    if (delta.lpNorm<1>() < 1e-7) break;
  }
  return w;
}

void require_both_labels(const std::vector<Example>& examples) {
  bool has_positive = false, has_negative = false;
  for (const auto& e : examples) (e.positive ? has_positive : has_negative) = true;
  if (!has_positive || !has_negative) throw Error("calibration needs both relevant and irrelevant candidates");
}

}  // namespace

PlattScaling fit_platt(const std::vector<ScoredQuestion>& questions, bool gate) {
  bool with_lead = !questions.empty(), answered = false, unanswered = false;
  for (const auto& q : questions) {
    with_lead = with_lead && q.leads.size() == q.values.size();
    if (gate && (q.bests.size() != q.values.size() || q.part_bests.empty()))
      throw Error("a gated calibration needs each candidate's ranking best and each part's best");
    (q.gold > 0 ? answered : unanswered) = true;
  }
  if (gate && !(answered && unanswered))
    throw Error("a gated calibration needs questions with databases and questions no database answers");
  std::vector<Example> ranking;
  for (const auto& q : questions) {
    if (gate && q.gold == 0) continue;
    for (size_t i = 0; i < q.values.size(); ++i)
      ranking.push_back({{q.values[i], with_lead ? q.leads[i] : 0.0}, q.relevant[i] != 0, q.weight});
  }
  require_both_labels(ranking);
  const Eigen::VectorXd w = fit_logistic(ranking, with_lead ? 2 : 1);
  PlattScaling platt;
  platt.scale = static_cast<float>(w(0));
  platt.lead = with_lead ? static_cast<float>(w(1)) : 0.0f;
  platt.bias = static_cast<float>(w(w.size() - 1));
  if (gate) {
    std::vector<Example> bests;
    for (const auto& q : questions)
      for (float best : q.part_bests)
        bests.push_back({{best, 0.0}, q.gold > 0, q.weight / static_cast<double>(q.part_bests.size())});
    const Eigen::VectorXd g = fit_logistic(bests, 1);
    platt.gated = true;
    platt.gate_scale = static_cast<float>(g(0));
    platt.gate_bias = static_cast<float>(g(1));
  }
  return platt;
}

void weigh_no_database_questions(std::vector<ScoredQuestion>& questions) {
  int64_t none = 0;
  for (const auto& q : questions) none += q.gold == 0 ? 1 : 0;
  const auto some = static_cast<int64_t>(questions.size()) - none;
  if (none == 0 || some == 0) return;
  for (auto& q : questions)
    if (q.gold == 0) q.weight = static_cast<double>(some) / static_cast<double>(none);
}

int64_t selected_count(const ScoredQuestion& question, float threshold) {
  const auto size = static_cast<int64_t>(question.values.size());
  int64_t count = std::min(std::max<int64_t>(question.forced, 1), size);
  while (count < size && question.values[static_cast<size_t>(count)] >= threshold) ++count;
  return count;
}

SetMetrics set_metrics(const std::vector<ScoredQuestion>& questions, float threshold) {
  int64_t true_positives = 0, selected = 0, gold = 0;
  for (const auto& q : questions) {
    const int64_t n = selected_count(q, threshold);
    for (int64_t i = 0; i < n; ++i) true_positives += q.relevant[static_cast<size_t>(i)] ? 1 : 0;
    selected += n;
    gold += q.gold;
  }
  return micro_averaged(true_positives, selected, gold, static_cast<int64_t>(questions.size()));
}

SetMetrics micro_averaged(int64_t hits, int64_t selected, int64_t gold, int64_t questions) {
  SetMetrics m;
  m.questions = questions;
  m.precision = selected ? static_cast<double>(hits) / static_cast<double>(selected) : 0.0;
  m.recall = gold ? static_cast<double>(hits) / static_cast<double>(gold) : 0.0;
  m.f1 = m.precision + m.recall > 0.0 ? 2.0 * m.precision * m.recall / (m.precision + m.recall) : 0.0;
  return m;
}

float best_threshold(const std::vector<ScoredQuestion>& questions) {
  std::vector<float> candidates;
  for (const auto& q : questions) candidates.insert(candidates.end(), q.values.begin(), q.values.end());
  if (candidates.empty()) throw Error("calibration needs at least one scored question");
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  if (candidates.size() > kMaxThresholds) {  // evenly spaced quantiles keep the search linear in the data
    std::vector<float> thinned;
    for (size_t i = 0; i < kMaxThresholds; ++i) thinned.push_back(candidates[i * candidates.size() / kMaxThresholds]);
    candidates.swap(thinned);
  }
  float best = candidates.back();
  double best_f1 = -1.0;
  for (float t : candidates) {
    const double f1 = set_metrics(questions, t).f1;
    if (f1 >= best_f1) {
      best_f1 = f1;
      best = t;
    }
  }
  return best;
}

}  // namespace relmem
