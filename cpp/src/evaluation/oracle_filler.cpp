#include "relmem/evaluation/oracle_filler.hpp"

#include <cstdio>

#include "../hybrid/fill_prompts.hpp"
#include "oracle_answers.hpp"

namespace relmem::evaluation {

using hybrid::find_request_payload;
using hybrid::payload_items;

namespace {

using nlohmann::json;

std::string format_rate(double rate) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", rate);
  return buffer;
}

}  // namespace

struct OracleFiller::Impl {
  std::map<std::string, std::unique_ptr<OracleDatabase>> databases;
  OracleOptions options;
  int64_t calls = 0;
  int64_t unanswered = 0;

  // Makes a share of values wrong, the same way every time for the same item.
  json maybe_wrong(const OracleDatabase& db, const std::string& table, const std::string& column, const json& truth,
                   const json& spec, const std::string& where) {
    if (options.error_rate <= 0 || truth.is_null()) return truth;
    if (truth.is_array()) {
      json out = json::array();
      for (const auto& item : truth) {
        const std::string at = where + "\x1f" + item.dump();
        out.push_back(oracle_draw(options.seed, at) < options.error_rate
                          ? wrong_value(db, "", "", item, spec, static_cast<uint64_t>(oracle_draw(options.seed + 1, at) * 1e9))
                          : item);
      }
      return out;
    }
    if (oracle_draw(options.seed, where) >= options.error_rate) return truth;
    return wrong_value(db, table, column, truth, spec, static_cast<uint64_t>(oracle_draw(options.seed + 1, where) * 1e9));
  }

  json answer(const json& payload) {
    const std::string database = payload.value("database", "");
    const auto found = databases.find(database);
    if (found == databases.end()) throw Error("oracle filler: no original database '" + database + "'");
    const OracleDatabase& db = *found->second;
    const std::string kind = payload.value("task", "");
    const std::string table = payload.value("table", "");
    const auto& answers = payload.at("answers");
    json reply = json::object();
    for (const auto& [number, input] : payload_items(payload)) {
      const std::string id = std::to_string(number);
      const std::string where = database + "\x1f" + table + "\x1f" + input.dump();
      if (kind == "fill") {
        json row = json::object();
        for (const auto& spec : answers) {
          const std::string name = spec.value("name", "");
          const std::string column = db.table_name(table).empty() ? "" : db.column_name(db.table_name(table), name);
          row[name] = maybe_wrong(db, db.table_name(table), column, true_fill(db, table, input, spec), spec,
                                  where + "\x1f" + name);
        }
        reply[id] = answers.size() == 1 ? row.begin().value() : row;  // one column: its bare value
      } else if (kind == "list") {
        const auto& spec = answers.at(0);
        reply[id] = maybe_wrong(db, "", "", true_list(db, payload.value("relation", ""), table, input, spec), spec,
                                where + "\x1f" + payload.value("relation", ""));
      } else if (kind == "map" || kind == "match" || kind == "qa") {
        const auto& spec = answers.at(0);
        const std::string instruction = payload.value("instruction", "");
        auto truth = true_function_answer(db, kind, instruction, input, spec);
        if (!truth) ++unanswered;
        reply[id] = maybe_wrong(db, "", "", truth.value_or(json()), spec, where + "\x1f" + instruction);
      } else {
        throw Error("oracle filler: unknown task '" + kind + "'");
      }
    }
    return reply;
  }
};

OracleFiller::OracleFiller(std::vector<OracleSource> sources, OracleOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.error_rate < 0 || options.error_rate > 1) throw Error("oracle filler: error rate must be in [0, 1]");
  impl_->options = options;
  for (auto& source : sources) {
    const std::string name = source.database;
    impl_->databases[name] = std::make_unique<OracleDatabase>(std::move(source));
  }
}

OracleFiller::~OracleFiller() = default;

std::string OracleFiller::identity() const {
  return "oracle-filler(error=" + format_rate(impl_->options.error_rate) +
         ",seed=" + std::to_string(impl_->options.seed) + ")";
}

int64_t OracleFiller::calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return impl_->calls;
}

int64_t OracleFiller::unanswered_items() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return impl_->unanswered;
}

ChatResponse OracleFiller::do_chat(const std::vector<ChatMessage>& messages, const ChatParams& params) {
  const auto payload = find_request_payload(messages);
  if (!payload)
    throw Error("oracle filler answers only relmem's hybrid fill requests, not a '" +
                (params.stage.empty() ? std::string("unspecified") : params.stage) + "' request");
  std::lock_guard<std::mutex> lock(mutex_);
  ++impl_->calls;
  const std::string text = impl_->answer(*payload).dump(-1, ' ', false, json::error_handler_t::replace);
  return {text, estimate_usage(messages, text), "stop", false};
}

}  // namespace relmem::evaluation
