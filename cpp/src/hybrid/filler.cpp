#include "relmem/hybrid/filler.hpp"

#include "fill_answers.hpp"
#include "fill_prompts.hpp"
#include "text.hpp"
#include "relmem/llm/sha256.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

constexpr size_t kMaxProblems = 8;

void note(FillReport& report, const std::string& problem) {
  if (report.problems.size() < kMaxProblems) report.problems.push_back(problem);
}

std::string prompt_hash(const std::vector<ChatMessage>& messages) {
  std::string all;
  for (const auto& m : messages) all += m.role + "\n" + m.content + "\n";
  return sha256_hex(all);
}

// What one item's reply holds for answer `index`: fill replies are objects keyed by column, the rest bare values.
std::optional<json> reply_for(const FillTask& task, const json& item_reply, size_t index) {
  if (task.kind != "fill") return item_reply;
  if (!item_reply.is_object()) return task.answers.size() == 1 ? std::optional<json>(item_reply) : std::nullopt;
  const auto& name = task.answers[index].name;
  if (item_reply.contains(name)) return item_reply[name];
  for (auto it = item_reply.begin(); it != item_reply.end(); ++it)  // a differently cased column name
    if (to_lower(it.key()) == to_lower(name)) return it.value();
  return std::nullopt;
}

}  // namespace

void FillReport::add(const FillReport& other) {
  requests += other.requests;
  items += other.items;
  values += other.values;
  nulls += other.nulls;
  failed_requests += other.failed_requests;
  prompt_tokens += other.prompt_tokens;
  completion_tokens += other.completion_tokens;
  for (const auto& p : other.problems) note(*this, p);
}

json FillReport::to_json() const {
  return {{"requests", requests}, {"items", items}, {"values", values}, {"nulls", nulls},
          {"failed_requests", failed_requests}, {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens}, {"total_tokens", prompt_tokens + completion_tokens},
          {"problems", problems}};
}

std::string item_key(const json& shown) { return shown.dump(-1, ' ', false, json::error_handler_t::replace); }

Filler::Filler(std::shared_ptr<LLM> llm, std::shared_ptr<FillStore> store, FillerOptions options)
    : llm_(std::move(llm)), store_(std::move(store)), options_(options) {
  if (!llm_) throw Error("Filler needs an LLM");
  if (!store_) throw Error("Filler needs a fill store");
  if (options_.batch_size < 1) throw Error("Filler batch_size must be at least 1");
}

FillOutcome Filler::fill(const FillTask& task, const std::vector<FillItem>& items) {
  if (task.answers.empty() || task.answers.size() != task.scopes.size())
    throw Error("fill task needs one scope per answer");
  FillOutcome outcome;
  outcome.values.resize(task.answers.size());
  FillReport& report = outcome.report;
  report.items = static_cast<int64_t>(items.size());

  std::vector<const FillItem*> pending;
  for (const auto& item : items) pending.push_back(&item);
  for (int attempt = 0; attempt < 2 && !pending.empty(); ++attempt) {
    const bool last = attempt == 1;
    std::vector<const FillItem*> again;
    for (size_t begin = 0; begin < pending.size(); begin += options_.batch_size) {
      const std::vector<const FillItem*> batch(pending.begin() + begin,
                                               pending.begin() + std::min(pending.size(), begin + options_.batch_size));
      const auto messages = request_messages(request_payload(task, batch, options_.max_shown_allowed));
      ChatParams params;
      params.stage = task.stage;
      params.temperature = 0.0;
      if (options_.max_tokens > 0) params.max_tokens = options_.max_tokens;
      ChatResponse response;
      ++report.requests;
      try {
        response = llm_->chat(messages, params);
      } catch (const Error& e) {
        ++report.failed_requests;
        note(report, std::string("LLM request failed: ") + e.what());
        if (!last) {
          again.insert(again.end(), batch.begin(), batch.end());
        } else {
          for (const auto* item : batch)  // unstored: a later question asks again
            for (auto& values : outcome.values) values[item->key] = json();
          report.nulls += static_cast<int64_t>(batch.size() * task.answers.size());
        }
        continue;
      }
      report.prompt_tokens += response.usage.prompt_tokens;
      report.completion_tokens += response.usage.completion_tokens;
      const FillProvenance provenance{llm_->identity(), prompt_hash(messages), response.text,
                                      response.usage.prompt_tokens, response.usage.completion_tokens, ""};
      const auto parsed = parse_lenient_json(response.text);
      const auto by_item = parsed ? answers_by_item(*parsed, static_cast<int>(batch.size()))
                                  : std::unordered_map<int, json>{};
      if (!parsed) note(report, "unreadable answer: " + response.text.substr(0, 120));
      std::vector<std::vector<FillAnswer>> stored(task.answers.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        const auto found = by_item.find(static_cast<int>(i) + 1);
        std::vector<std::optional<json>> checked(task.answers.size());
        std::vector<std::string> reasons(task.answers.size());
        bool complete = true;
        for (size_t a = 0; a < task.answers.size(); ++a) {
          const auto raw = found == by_item.end() ? std::nullopt : reply_for(task, found->second, a);
          if (!raw) {
            reasons[a] = parsed ? "missing from the answer" : "unreadable answer";
          } else {
            checked[a] = check_answer(*raw, task.answers[a], reasons[a]);
          }
          complete = complete && checked[a].has_value();
        }
        if (!complete && !last) {
          again.push_back(batch[i]);
          continue;
        }
        for (size_t a = 0; a < task.answers.size(); ++a) {
          const json value = checked[a] ? *checked[a] : json();
          std::string reason = reasons[a];
          if (!checked[a]) reason += " (asked twice)";
          if (value.is_null() && reason.empty()) reason = "the LLM did not know";
          if (value.is_null() || (value.is_array() && value.empty())) ++report.nulls; else ++report.values;
          if (!checked[a]) note(report, task.answers[a].name + " " + batch[i]->key + ": " + reason);
          outcome.values[a][batch[i]->key] = value;
          stored[a].push_back({batch[i]->key, value, reason});
        }
      }
      for (size_t a = 0; a < task.answers.size(); ++a) store_->put(task.scopes[a], stored[a], provenance);
    }
    pending = std::move(again);
  }
  return outcome;
}

}  // namespace relmem::hybrid
