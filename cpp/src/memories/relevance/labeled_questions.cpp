#include "relmem/memories/relevance/labeled_questions.hpp"

#include <algorithm>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "relmem/common.hpp"

namespace relmem {

std::vector<LabeledQuestion> load_labeled_questions(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open questions file " + path);
  const auto data = nlohmann::json::parse(in, nullptr, false);
  if (data.is_discarded() || !data.is_array()) throw Error("questions file " + path + " must hold a JSON list");
  std::vector<LabeledQuestion> questions;
  questions.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const auto& item = data[i];
    const std::string where = "questions file " + path + ", entry " + std::to_string(i);
    if (!item.is_object() || !item.contains("question") || !item["question"].is_string()) {
      throw Error(where + ": needs a string 'question'");
    }
    LabeledQuestion q;
    q.text = item["question"].get<std::string>();
    if (item.contains("db_ids") && item["db_ids"].is_array()) {
      for (const auto& db : item["db_ids"]) {
        if (!db.is_string()) throw Error(where + ": 'db_ids' must be a list of strings");
        q.databases.push_back(db.get<std::string>());
      }
    } else if (item.contains("db_id") && item["db_id"].is_string()) {
      q.databases.push_back(item["db_id"].get<std::string>());
    }
    if (q.databases.empty()) throw Error(where + ": needs 'db_id' (string) or 'db_ids' (non-empty list)");
    questions.push_back(std::move(q));
  }
  return questions;
}

CompositeStyle parse_composite_style(const std::string& name) {
  if (name == "larger-number") return CompositeStyle::LargerNumber;
  if (name == "concatenate") return CompositeStyle::Concatenate;
  if (name == "and-also") return CompositeStyle::AndAlso;
  throw Error("unknown composite style '" + name + "' (expected larger-number, concatenate or and-also)");
}

std::string compose_question(const std::vector<std::string>& parts, CompositeStyle style) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    switch (style) {
      case CompositeStyle::LargerNumber:
        out += (i == 0 ? "Which question has a larger number as its answer. " : "; ");
        out += "Q" + std::to_string(i + 1) + ": " + parts[i];
        break;
      case CompositeStyle::Concatenate:
        out += (i == 0 ? "" : " ") + parts[i];
        break;
      case CompositeStyle::AndAlso:
        out += (i == 0 ? "" : " Also, ") + parts[i];
        break;
    }
  }
  return out;
}

std::vector<LabeledQuestion> make_composites(const std::vector<LabeledQuestion>& singles, int64_t count,
                                             const CompositeOptions& options, std::mt19937_64& rng) {
  if (options.min_parts < 2 || options.max_parts < options.min_parts || options.styles.empty()) {
    throw Error("composite questions need 2 <= min_parts <= max_parts and at least one style");
  }
  std::map<std::string, std::vector<const LabeledQuestion*>> by_database;
  for (const auto& q : singles)
    if (q.databases.size() == 1) by_database[q.databases[0]].push_back(&q);
  std::vector<const std::vector<const LabeledQuestion*>*> groups;
  for (const auto& [_, group] : by_database) groups.push_back(&group);
  std::vector<LabeledQuestion> composites;
  if (groups.size() < 2) return composites;
  const int most = std::min<int>(options.max_parts, static_cast<int>(groups.size()));
  const int least = std::min(options.min_parts, most);
  std::vector<size_t> order(groups.size());
  for (int64_t c = 0; c < count; ++c) {
    const int parts = std::uniform_int_distribution<int>(least, most)(rng);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    LabeledQuestion composite;
    std::vector<std::string> texts;
    for (int i = 0; i < parts; ++i) {  // partial Fisher-Yates: `parts` distinct databases
      const size_t pick = std::uniform_int_distribution<size_t>(static_cast<size_t>(i), order.size() - 1)(rng);
      std::swap(order[static_cast<size_t>(i)], order[pick]);
      const auto& group = *groups[order[static_cast<size_t>(i)]];
      const auto* q = group[std::uniform_int_distribution<size_t>(0, group.size() - 1)(rng)];
      texts.push_back(q->text);
      composite.databases.push_back(q->databases[0]);
    }
    const auto style = options.styles[std::uniform_int_distribution<size_t>(0, options.styles.size() - 1)(rng)];
    composite.text = compose_question(texts, style);
    composite.parts = std::move(texts);
    composites.push_back(std::move(composite));
  }
  return composites;
}

}  // namespace relmem
