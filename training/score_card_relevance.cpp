// relmem-score-card-relevance: the probabilities a card-cosine relevance model (relmem-train-relevance
// --classifier card-cosine) gives, over every database of --dbs:
//   relmem-score-card-relevance --model DIR --dbs spider/database [--questions dev.json] [--no-database texts.json]
// --questions (labelled, Spider's format): recall@1 / @5 and p of the right database; --no-database (a JSON list of
// questions no database answers; repeatable): the highest p each gets. Prints one JSON object.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relmem/catalog/catalog.hpp"
#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/memories/relevance/database_texts.hpp"
#include "relmem/memories/relevance/labeled_questions.hpp"
#include "relmem/memories/text/wordnet.hpp"
#include "relmem/memories/training/card_relevance_training.hpp"
#include "number_flags.hpp"

namespace {

constexpr const char* kUsage =
    "usage: relmem-score-card-relevance --model DIR --dbs DIR [--questions FILE] [--no-database FILE] [--threads N]\n";

double share(const std::vector<float>& values, bool (*keep)(float)) {
  if (values.empty()) return 0.0;
  return static_cast<double>(std::count_if(values.begin(), values.end(), keep)) / static_cast<double>(values.size());
}

double mean(const std::vector<float>& values) {
  double sum = 0.0;
  for (float v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

double median(std::vector<float> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A JSON list of question strings; relmem::Error names the file and what is wrong.
std::vector<std::string> read_texts(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw relmem::Error("cannot open --no-database file " + file);
  const auto json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.is_array()) throw relmem::Error(file + ": expected a JSON list of questions");
  std::vector<std::string> texts;
  for (const auto& item : json) {
    if (!item.is_string()) {
      throw relmem::Error(file + ": entry " + std::to_string(texts.size()) + " is not a string");
    }
    texts.push_back(item.get<std::string>());
  }
  return texts;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, dbs, labelled;
  std::vector<std::string> unanswerable;
  std::string threads;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") model = value;
    else if (flag == "--dbs") dbs = value;
    else if (flag == "--questions") labelled = value;
    else if (flag == "--no-database") unanswerable.push_back(value);
    else if (flag == "--threads") threads = value;
    else {
      std::fprintf(stderr, "unknown flag %s\n%s", flag.c_str(), kUsage);
      return 2;
    }
  }
  if (model.empty() || dbs.empty() || argc % 2 == 0) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!threads.empty()) {
    const std::optional<int> count = relmem_training::parse_number<int>(threads);
    if (!count || *count < 1) {
      std::fprintf(stderr, "bad value '%s' for --threads\n%s", threads.c_str(), kUsage);
      return 2;
    }
    omp_set_num_threads(*count);
  }
  try {
    const relmem::BertEncoder encoder(model);
    const relmem::CardRelevanceHead head = relmem::load_card_relevance_head(model);
    const relmem::Catalog catalog = relmem::Catalog::open(dbs);
    relmem::CardOptions card;
    card.samples_per_column = 3;  // as relmem-train-relevance builds the cards
    std::vector<std::string> names = catalog.databases(), cards;
    if (names.empty()) throw relmem::Error("no databases in " + dbs);
    for (const auto& name : names) cards.push_back(relmem::database_texts(catalog, name, card, {}, 0, relmem::WordNet::shared()).card);
    const relmem::RowMatrix card_vectors = encoder.encode(cards);
    nlohmann::json out = {{"model", model}, {"databases", names.size()}, {"scale", head.scale}, {"bias", head.bias}};

    if (!labelled.empty()) {
      std::vector<std::string> texts;
      std::vector<int> gold;
      for (const auto& q : relmem::load_labeled_questions(labelled)) {
        const auto it = std::find(names.begin(), names.end(), q.databases.front());
        if (q.databases.size() != 1 || it == names.end()) continue;
        texts.push_back(q.text);
        gold.push_back(static_cast<int>(it - names.begin()));
      }
      const relmem::RowMatrix scores = encoder.encode(texts) * card_vectors.transpose();
      std::vector<float> right, wrong_max;
      int64_t first = 0, top5 = 0;
      for (int64_t q = 0; q < scores.rows(); ++q) {
        const float gold_score = scores(q, gold[q]);
        int64_t above = 0;
        float wrong = -2.0f;
        for (int64_t d = 0; d < scores.cols(); ++d) {
          if (d == gold[q]) continue;
          above += scores(q, d) > gold_score;
          wrong = std::max(wrong, scores(q, d));
        }
        first += above == 0;
        top5 += above < 5;
        right.push_back(head.probability(gold_score));
        wrong_max.push_back(head.probability(wrong));
      }
      const double n = std::max<double>(1.0, static_cast<double>(texts.size()));
      out["questions"] = {{"file", labelled},
                          {"n", texts.size()},
                          {"recall@1", first / n},
                          {"recall@5", top5 / n},
                          {"p_right_mean", mean(right)},
                          {"p_right_median", median(right)},
                          {"p_right_at_least_0.8", share(right, [](float p) { return p >= 0.8f; })},
                          {"max_p_wrong_mean", mean(wrong_max)},
                          {"max_p_wrong_below_0.5", share(wrong_max, [](float p) { return p < 0.5f; })}};
    }
    for (const auto& file : unanswerable) {
      const auto texts = read_texts(file);
      const relmem::RowMatrix scores = encoder.encode(texts) * card_vectors.transpose();
      std::vector<float> max_p;
      nlohmann::json worst = nlohmann::json::array();
      for (int64_t q = 0; q < scores.rows(); ++q) {
        Eigen::Index best = 0;
        max_p.push_back(head.probability(scores.row(q).maxCoeff(&best)));
        if (max_p.back() >= 0.5f) worst.push_back({texts[q], names[best], max_p.back()});
      }
      out["no_database"].push_back({{"file", file},
                            {"n", texts.size()},
                            {"max_p_mean", mean(max_p)},
                            {"max_p_median", median(max_p)},
                            {"max_p_max", max_p.empty() ? 0.0f : *std::max_element(max_p.begin(), max_p.end())},
                            {"max_p_below_0.5", share(max_p, [](float p) { return p < 0.5f; })},
                            {"at_least_0.5", worst}});
    }
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "relmem-score-card-relevance: %s\n", e.what());
    return 1;
  }
}
