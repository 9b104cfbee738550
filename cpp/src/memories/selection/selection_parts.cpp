// The selection memory's parts ranker: a question split into parts, each part ranked, the rankings merged, and the
// calibrated set of databases chosen.
#include "relmem/memories/selection/selection_memory.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "../../common/checksummed_file.hpp"
#include "../../common/parallel_for.hpp"
#include "relmem/encoders/use_lite.hpp"
#include "relmem/index/topk.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/text/lexical_weighting.hpp"
#include "relmem/memories/text/question_parts.hpp"
#include "relmem/memories/text/question_spans.hpp"
#include "relmem/memories/text/wordnet.hpp"

#include "selection_terms.hpp"

namespace relmem {

using namespace selection_detail;

std::vector<DatabaseMatch> SelectionMemory::select(const std::string& question, int k) const {
  return select_batch({question}, k)[0];
}

std::vector<std::vector<DatabaseMatch>> SelectionMemory::select_batch(const std::vector<std::string>& questions,
                                                                      int k) const {
  if (k < 1) throw Error("k must be >= 1");
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::vector<DatabaseMatch>> out;
  for (const auto& parts : rank_parts(questions, k)) out.push_back(merge_parts(parts, k));
  return out;
}

std::vector<SelectionMemory::PartRankings> SelectionMemory::rank_given_parts(
    const std::vector<std::vector<std::string>>& questions, int k) const {
  std::vector<std::string> wholes;
  std::vector<QuestionParts> split;
  for (const auto& parts : questions) {
    QuestionParts given{{}, true};
    for (const auto& part : parts)
      if (part.find_first_not_of(" \t\n\r") != std::string::npos) given.texts.push_back(part);
    if (given.texts.empty()) throw Error("select_parts: a question needs at least one non-empty part");
    wholes.push_back(given.texts.size() == 1 ? given.texts[0] : std::string());  // marked parts: the whole is unread
    split.push_back(std::move(given));
  }
  return rank_split(wholes, split, k);
}

std::vector<std::vector<DatabaseMatch>> SelectionMemory::select_parts_batch(
    const std::vector<std::vector<std::string>>& questions, int k) const {
  if (k < 1) throw Error("k must be >= 1");
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::vector<DatabaseMatch>> out;
  for (const auto& parts : rank_given_parts(questions, k)) out.push_back(merge_parts(parts, k));
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::select_parts(const std::vector<std::string>& parts, int k) const {
  return select_parts_batch({parts}, k)[0];
}

std::vector<SelectionMemory::PartRankings> SelectionMemory::rank_parts(const std::vector<std::string>& questions,
                                                                     int k) const {
  std::vector<QuestionParts> split;
  for (const auto& question : questions) {
    split.push_back(split_question(question));
    if (!options_.split_sentences && !split.back().marked) split.back() = {{question}, false};
  }
  return rank_split(questions, split, k);
}

std::vector<SelectionMemory::PartRankings> SelectionMemory::rank_split(const std::vector<std::string>& questions,
                                                                     const std::vector<QuestionParts>& split,
                                                                     int k) const {
  if (questions.empty()) return {};
  // Beside its parts, the whole question gives only its best database, and only when it was cut into two sentences:
  // the whole's next databases would crowd out the parts' (3-part questions from train_spider.json, all in the top
  // 5: 0.550 with the whole ranking, 0.573 with its best), and beside three or more parts its best is one guess more
  // (plain 3-part composites of train_spider.json on MiniLM: 0.724 with it, 0.732 without); but two parts alone lose
  // a single question cut in two (recall@1 0.613 against 0.732). One train_spider.json question in 7,000 has three
  // sentence parts or more.
  auto whole_ranked = [](const QuestionParts& parts) {
    return parts.texts.size() == 1 || (!parts.marked && parts.texts.size() == 2);
  };
  std::vector<std::string> texts;  // per question: its whole text when it is ranked (see above), then its parts
  for (size_t i = 0; i < questions.size(); ++i) {
    const QuestionParts& parts = split[i];
    if (whole_ranked(parts)) texts.push_back(questions[i]);
    if (parts.texts.size() > 1) texts.insert(texts.end(), parts.texts.begin(), parts.texts.end());
  }
  // One ranking per text: of its depth, into its place in `out`.
  struct Ranking {
    int depth;
    std::vector<DatabaseMatch>* into;
  };
  std::vector<PartRankings> out(questions.size());
  std::vector<Ranking> rankings;  // rankings[t]: of texts[t]
  for (size_t i = 0; i < questions.size(); ++i) {
    const QuestionParts& parts = split[i];
    out[i].parts.resize(parts.texts.size());
    if (parts.texts.size() == 1) {
      rankings.push_back({k, &out[i].parts[0]});
      continue;
    }
    if (whole_ranked(parts)) rankings.push_back({1, &out[i].whole});
    for (auto& part : out[i].parts) rankings.push_back({INT_MAX, &part});
  }
  const EncodedQuestions encoded = encode_questions(texts);
  // On a GPU, the pools of all texts come from one search; on the CPU each text finds its own as it is scored.
  const std::vector<Pool> found_pools =
      device_cards_ ? pools(encoded.vectors.data(), encoded.vectors.rows()) : std::vector<Pool>();
  const auto count = static_cast<int64_t>(rankings.size());
  // The texts are scored independently (score() only reads the memory, whose lock the caller holds; the lexical
  // weights and the word cache have their own locks), so in parallel the rankings are those of one at a time.
  parallel_for(count, 2, [&](int64_t t) {
    *rankings[static_cast<size_t>(t)].into =
        score(encoded.vectors.row(t).data(), lexical_ ? encoded.lexical.row(t).data() : nullptr,
              rankings[static_cast<size_t>(t)].depth, encoded.tuned.size() ? encoded.tuned.row(t).data() : nullptr,
              &encoded.value_evidence[static_cast<size_t>(t)], &encoded.words[static_cast<size_t>(t)],
              found_pools.empty() ? nullptr : &found_pools[static_cast<size_t>(t)]);
  });
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::merge_parts(const PartRankings& rankings, int k) {
  if (rankings.whole.empty() && rankings.parts.size() == 1) return rankings.parts[0];
  // Scores are comparable within a part, not across parts: a part about a narrow topic scores lower everywhere.
  // Every ranking's best database therefore scores as the best one, the whole question's first, then the parts'
  // by their own probability.
  float best = -std::numeric_limits<float>::infinity();
  for (const auto& part : rankings.parts)
    if (!part.empty()) best = std::max(best, part[0].score);
  if (!rankings.whole.empty()) best = std::max(best, rankings.whole[0].score);
  struct Merged {
    DatabaseMatch match;
    int tier = 2;  // 0: the whole question's best, 1: a part's best, 2: the rest
    float lead = 0.0f;  // a part's best: its own probability
  };
  std::unordered_map<std::string, Merged> merged;
  auto add = [&](const std::vector<DatabaseMatch>& ranking, bool whole) {
    for (size_t r = 0; r < ranking.size(); ++r) {
      const DatabaseMatch& match = ranking[r];
      const float shifted = match.score + (best - ranking[0].score);
      const int tier = r > 0 ? 2 : (whole ? 0 : 1);
      auto [it, inserted] = merged.emplace(match.database, Merged{{match.database, shifted, match.probability}, tier,
                                                                   r == 0 ? match.probability : 0.0f});
      if (inserted) continue;
      Merged& m = it->second;
      m.match.score = std::max(m.match.score, shifted);
      m.match.probability = std::max(m.match.probability, match.probability);
      m.tier = std::min(m.tier, tier);
      if (r == 0) m.lead = std::max(m.lead, match.probability);
    }
  };
  add(rankings.whole, true);
  for (const auto& part : rankings.parts) add(part, false);
  std::vector<Merged> ordered;
  for (auto& [_, m] : merged) ordered.push_back(std::move(m));
  std::sort(ordered.begin(), ordered.end(), [](const Merged& a, const Merged& b) {
    if (a.match.score != b.match.score) return a.match.score > b.match.score;
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.lead != b.lead) return a.lead > b.lead;
    return a.match.database < b.match.database;
  });
  std::vector<DatabaseMatch> out;
  for (auto& m : ordered) {
    if (static_cast<int64_t>(out.size()) >= k) break;
    out.push_back(std::move(m.match));
  }
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::select_vector(const float* question, int k,
                                                          const float* lexical_question) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  return score(question, lexical_question, k);
}

std::vector<DatabaseMatch> SelectionMemory::select_set(const std::string& question, bool at_least_one) const {
  return select_set_batch({question}, at_least_one)[0];
}

std::vector<std::vector<DatabaseMatch>> SelectionMemory::select_set_batch(const std::vector<std::string>& questions,
                                                                          bool at_least_one) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::vector<DatabaseMatch>> out;
  for (const auto& parts : rank_parts(questions, INT_MAX)) out.push_back(chosen_set(parts, at_least_one));
  return out;
}

std::vector<DatabaseMatch> SelectionMemory::select_set_parts(const std::vector<std::string>& parts,
                                                             bool at_least_one) const {
  std::shared_lock<std::shared_mutex> lock(*lock_);
  return chosen_set(rank_given_parts({parts}, INT_MAX)[0], at_least_one);
}

std::vector<DatabaseMatch> SelectionMemory::chosen_set(const PartRankings& parts, bool at_least_one) const {
  // Every part picks its own databases (at least its best one), so a question with several parts gets one per
  // part. The whole question picks only when there are no parts: beside them, its best is one more guess (set F1
  // of 3-part questions from train_spider.json 0.705 with it, 0.723 without).
  std::unordered_set<std::string> chosen;
  for (const auto& part : parts.parts) {
    for (size_t i = 0; i < part.size() && ((at_least_one && i == 0) || part[i].probability >= calibration_.threshold);
         ++i)
      chosen.insert(part[i].database);
  }
  std::vector<DatabaseMatch> matches;
  for (auto& match : merge_parts(parts, INT_MAX))
    if (chosen.count(match.database)) matches.push_back(std::move(match));
  return matches;
}

SetMetrics SelectionMemory::calibrate(const std::vector<LabeledQuestion>& questions, int candidates,
                                     CalibrationObjective objective, bool lead, bool gate) {
  if (questions.empty()) throw Error("calibration needs at least one labelled question");
  if (candidates < 1) throw Error("calibration candidates must be >= 1");
  std::unique_lock<std::shared_mutex> lock(*lock_);
  std::vector<std::string> texts;
  for (const auto& q : questions) {
    for (const auto& db : q.databases)
      if (!entries_.count(db)) throw Error("calibration question names unknown database '" + db + "'");
    texts.push_back(q.text);
  }
  const std::vector<PartRankings> ranked = rank_parts(texts, candidates);
  std::vector<ScoredQuestion> scored;
  for (size_t i = 0; i < questions.size(); ++i) {
    // A question's candidates count with their best part's own (unshifted) score, the score that sets their
    // probability; as in select_set, the whole question's ranking counts only when it has no parts.
    std::unordered_map<std::string, float> best_score, lead_of_best, best_of_part;
    ScoredQuestion s;
    for (const auto& part : ranked[i].parts) {
      if (part.empty()) continue;
      const std::vector<float> leads = leads_over_others(part);
      float part_best = part[0].score;
      for (const auto& match : part) part_best = std::max(part_best, match.score);
      s.part_bests.push_back(part_best);
      for (size_t j = 0; j < part.size(); ++j) {
        auto [it, inserted] = best_score.emplace(part[j].database, part[j].score);
        if (inserted || part[j].score > it->second) {
          it->second = part[j].score;
          lead_of_best[part[j].database] = leads[j];
          best_of_part[part[j].database] = part_best;
        }
      }
    }
    // As in select_set, each part's best database is chosen whatever its probability: they lead, the rest follow
    // best first. (Fitted as a prefix of the merged ranking instead, a 3-part question needed a threshold low
    // enough for all three of its databases, and the threshold came out too low for single questions.)
    std::unordered_set<std::string> part_best;
    for (const auto& part : ranked[i].parts)
      if (!part.empty()) part_best.insert(part[0].database);
    std::vector<DatabaseMatch> forced, others;
    for (const auto& [database, value] : best_score)
      (part_best.count(database) ? forced : others).push_back({database, value, 0.0f});
    std::sort(forced.begin(), forced.end(), ranks_before);
    std::sort(others.begin(), others.end(), ranks_before);
    std::vector<DatabaseMatch> candidates_of_question = forced;
    candidates_of_question.insert(candidates_of_question.end(), others.begin(), others.end());
    const auto kept = std::max<int64_t>(candidates, static_cast<int64_t>(forced.size()));
    if (static_cast<int64_t>(candidates_of_question.size()) > kept) candidates_of_question.resize(static_cast<size_t>(kept));
    s.gold = static_cast<int64_t>(questions[i].databases.size());
    s.forced = static_cast<int64_t>(forced.size());
    for (const auto& match : candidates_of_question) {
      s.values.push_back(match.score);
      if (lead) s.leads.push_back(lead_of_best.at(match.database));
      s.bests.push_back(best_of_part.at(match.database));
      const auto& gold = questions[i].databases;
      s.relevant.push_back(std::find(gold.begin(), gold.end(), match.database) != gold.end() ? 1 : 0);
    }
    scored.push_back(std::move(s));
  }
  weigh_no_database_questions(scored);
  const PlattScaling platt = fit_platt(scored, gate);
  for (auto& s : scored)
    for (size_t j = 0; j < s.values.size(); ++j)
      s.values[j] = platt.probability(s.values[j], lead ? s.leads[j] : 0.0f, s.bests[j]);
  SelectionCalibration c;
  c.scale = platt.scale;
  c.bias = platt.bias;
  c.lead = platt.lead;
  c.gated = platt.gated;
  c.gate_scale = platt.gate_scale;
  c.gate_bias = platt.gate_bias;
  c.threshold = objective == CalibrationObjective::Likelihood ? kLikelihoodThreshold : best_threshold(scored);
  c.fitted = true;
  calibration_ = c;
  return set_metrics(scored, c.threshold);
}

}  // namespace relmem
