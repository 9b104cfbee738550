#include "relmem/memories/relevance/selection_calibration.hpp"

#include <algorithm>
#include <cmath>

#include "relmem/common.hpp"
#include "relmem/memories/relevance/relevance_model.hpp"

namespace relmem {
namespace {
constexpr int kNewtonSteps = 50;
constexpr double kDamping = 1e-3;
constexpr size_t kMaxThresholds = 2000;
}  // namespace

float PlattScaling::probability(float score) const { return sigmoid(scale * score + bias); }

PlattScaling fit_platt(const std::vector<ScoredQuestion>& questions) {
  double a = 1.0, b = 0.0;
  int64_t positives = 0, total = 0;
  for (const auto& q : questions) {
    for (char r : q.relevant) positives += r ? 1 : 0;
    total += static_cast<int64_t>(q.relevant.size());
  }
  if (positives == 0 || positives == total) throw Error("calibration needs both relevant and irrelevant candidates");
  for (int step = 0; step < kNewtonSteps; ++step) {
    double ga = kDamping * a, gb = 0.0, haa = kDamping, hab = 0.0, hbb = 1e-9;
    for (const auto& q : questions) {
      for (size_t i = 0; i < q.values.size(); ++i) {
        const double s = q.values[i];
        const double p = 1.0 / (1.0 + std::exp(-(a * s + b)));
        const double e = p - (q.relevant[i] ? 1.0 : 0.0), w = p * (1.0 - p);
        ga += e * s;
        gb += e;
        haa += w * s * s;
        hab += w * s;
        hbb += w;
      }
    }
    const double det = haa * hbb - hab * hab;
    if (!(det > 0.0)) break;
    const double da = (hbb * ga - hab * gb) / det, db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (std::fabs(da) + std::fabs(db) < 1e-7) break;
  }
  return {static_cast<float>(a), static_cast<float>(b)};
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
