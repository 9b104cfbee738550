#pragma once
// Turning selection scores into probabilities and sets: Platt scaling fitted by Newton's method (with a gate for
// questions that no database answers), and either the probability threshold that maximizes the micro-averaged F1
// of set selection on held-out questions, or 0.5.
#include <cstdint>
#include <vector>

namespace relmem {

// One labelled question as the selector saw it: its best candidates, best first, and how many databases it needs
// (none for a question no database answers).
struct ScoredQuestion {
  std::vector<float> values;  // scores or probabilities of the candidates: the `forced` first, then descending
  std::vector<char> relevant;  // 1 where the candidate is one of the question's databases
  int64_t gold = 0;            // the question's databases (some may be missing from the candidates)
  int64_t forced = 1;          // the leading candidates chosen whatever their value (each part's best)
  std::vector<float> leads;    // per candidate, its score minus the best other candidate's; empty: not a feature
  std::vector<float> bests;    // per candidate, the best score of the ranking it came from (the gate's input)
  std::vector<float> part_bests;  // the best score of each part's ranking: the gate's examples
  double weight = 1.0;         // of each of its candidates in the fit
};

// What calibration fits the set threshold for: the set F1 of held-out questions (a threshold near 1 for the untrained
// memory, since each part's best database is kept anyway), or the likelihood alone, whose threshold is 0.5: a
// database is selected when it is more likely relevant than not.
enum class CalibrationObjective { SetF1, Likelihood };
constexpr float kLikelihoodThreshold = 0.5f;

// p = answered(best) * sigmoid(scale * score + lead * (score - best other candidate's score) + bias), where
// answered(best) = sigmoid(gate_scale * best + gate_bias), from the best score of the candidate's ranking, is the
// probability that some database answers the question (1 when not gated). Apart, the gate rejects questions no
// database answers by how well anything matches them, and the second factor says how sure the ranking is among
// databases; one sigmoid of both has to lower every probability to keep the first group below 0.5. The gate's
// threshold on the best score belongs to the collection it was fitted on.
struct PlattScaling {
  float scale = 1.0f;
  float bias = 0.0f;
  float lead = 0.0f;
  bool gated = false;
  float gate_scale = 0.0f;
  float gate_bias = 0.0f;
  float probability(float score, float lead_over_others = 0.0f, float best = 0.0f) const;
};

struct SetMetrics {
  double precision = 0.0;
  double recall = 0.0;
  double f1 = 0.0;
  int64_t questions = 0;
};

// Micro-averaged precision, recall and F1 from counts over `questions` questions.
SetMetrics micro_averaged(int64_t hits, int64_t selected, int64_t gold, int64_t questions);

// Weighted logistic regression of `relevant` on the candidate scores, and on their leads when every question has
// them (L2-damped so separable data stays finite). With `gate`: the second factor on the questions with databases
// alone, and the gate on each part's best score, labelled by whether the question has databases (each question
// weighing its weight, shared among its parts); it needs questions of both kinds and every question's bests.
PlattScaling fit_platt(const std::vector<ScoredQuestion>& questions, bool gate = false);

// Weighs the questions without databases (gold 0) so that, as a group, they count as much as the others in the fit;
// unchanged when either group is empty.
void weigh_no_database_questions(std::vector<ScoredQuestion>& questions);

// Set selection: the forced candidates (at least the best one), then every other whose probability is >= threshold.
int64_t selected_count(const ScoredQuestion& question, float threshold);
// Micro-averaged precision/recall/F1 of set selection over questions whose values are probabilities.
SetMetrics set_metrics(const std::vector<ScoredQuestion>& questions, float threshold);
// The threshold among the observed probabilities with the best F1 (ties: the higher threshold).
float best_threshold(const std::vector<ScoredQuestion>& questions);

}  // namespace relmem
