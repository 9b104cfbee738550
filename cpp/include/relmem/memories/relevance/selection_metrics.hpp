#pragma once
// How well databases were ranked and selected for labelled questions: the one definition of the benchmark's and
// the trainer's metrics. Databases are integer ids (an index into a collection).
#include <cstdint>
#include <vector>

#include "relmem/memories/relevance/selection_calibration.hpp"

namespace relmem {

struct RankingMetrics {
  int64_t questions = 0;
  std::vector<int> ks;
  std::vector<double> recall;  // per k: the share of a question's databases among its top k, averaged over questions
  double all_in_top5 = 0.0;    // the share of questions with every one of their databases among the top 5
  double recall_at(int k) const;  // relmem::Error when k was not measured
};

// `ranked`: per question, database ids best first (at least max(ks) and 5 of them when there are). `gold`: per
// question, its databases.
RankingMetrics ranking_metrics(const std::vector<std::vector<int>>& ranked, const std::vector<std::vector<int>>& gold,
                               const std::vector<int>& ks);
// Precision, recall and F1 of selected sets, micro-averaged over the selected and gold databases of every question.
SetMetrics set_metrics(const std::vector<std::vector<int>>& selected, const std::vector<std::vector<int>>& gold);

}  // namespace relmem
