// The LLM functions of hybrid queries. Each call looks its inputs up among the stored answers; inputs not answered
// yet read as NULL and are noted, so the session asks the LLM once per distinct input, in batches, and runs the
// query again.
//   llm_map(instruction, value, ...)             row-wise answer
//   llm_map_in(instruction, domain, value, ...)  answer constrained to a domain
//   llm_qa(instruction, value, ...)              aggregate: one answer over the group's rows
//   llm_qa_in(instruction, domain, value, ...)   the same, constrained
//   llm_match(instruction, value, domain)        the domain value denoting the same thing as `value`, or NULL
// and concat(value, ...) where SQLite lacks it (before 3.44).
// A domain is a stored column ('table.column', 'table::column') or a fixed list ('a;b;c'). A value given as
// json_object('column', value, ...) is shown to the LLM as that object, so the input says which columns it comes
// from (as BlendSQL tells its LLM the column it maps); an object whose values are all NULL counts as NULL.
#include <algorithm>

#include "relmem/llm/sha256.hpp"
#include "session_core.hpp"

namespace relmem::hybrid {
namespace {

using nlohmann::json;

struct FunctionSpec {
  const char* name;
  const char* kind;
  bool constrained;
  bool aggregate;
};

constexpr FunctionSpec kFunctions[] = {
    {"llm_map", "map", false, false},     {"llm_map_in", "map", true, false},
    {"llm_qa", "qa", false, true},        {"llm_qa_in", "qa", true, true},
    {"llm_match", "match", true, false},
};

struct Registration {
  SessionState* state;
  const FunctionSpec* spec;
};

std::optional<std::string> text_argument(sqlite3_value* value) {
  if (sqlite3_value_type(value) == SQLITE_NULL) return std::nullopt;
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  return std::string(text ? text : "", static_cast<size_t>(sqlite3_value_bytes(value)));
}

// The function's state for (instruction, domain), created on first use.
FunctionState& function_state(SessionState& state, const char* kind, const std::string& instruction,
                              const std::string& domain) {
  const std::string scope = std::string(kind) + ":" + state.database + ":" +
                            sha256_hex(instruction + '\x1f' + domain).substr(0, 24);
  auto [it, inserted] = state.functions.try_emplace(scope);
  if (inserted) it->second = {kind, instruction, domain, scope};
  return it->second;
}

// Looks the item up; NULL and a note when it is not answered yet.
void answer(sqlite3_context* context, SessionState& state, const FunctionState& function, const json& shown) {
  const std::string key = item_key(shown);
  const auto& values = state.values(function.scope);
  const auto found = values.find(key);
  if (found != values.end()) {
    set_result(context, found->second);
    return;
  }
  state.missing.function_items[function.scope].emplace(key, shown);
  sqlite3_result_null(context);
}

bool is_json_subtype(sqlite3_value* value) {
  constexpr unsigned kJsonSubtype = 'J';  // what SQLite's JSON functions mark their results with
  return sqlite3_value_type(value) == SQLITE_TEXT && sqlite3_value_subtype(value) == kJsonSubtype;
}

// An argument as JSON: a json_object(...) argument as its object, anything else as its SQL value.
json argument_json(sqlite3_value* value) {
  if (is_json_subtype(value)) {
    json parsed = json::parse(reinterpret_cast<const char*>(sqlite3_value_text(value)), nullptr, false);
    if (parsed.is_object()) return parsed;
  }
  return value_to_json(value);
}

bool is_null_input(const json& value) {
  if (value.is_object())
    return std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_null(); });
  return value.is_null();
}

// Reads (instruction[, domain]) and the value arguments; false (result set) when the call has nothing to ask.
bool read_call(sqlite3_context* context, const FunctionSpec& spec, int argc, sqlite3_value** argv,
               std::string& instruction, std::string& domain, json& values) {
  const int fixed = spec.constrained && std::string(spec.kind) != "match" ? 2 : 1;
  const int min_args = std::string(spec.kind) == "match" ? 3 : fixed + 1;
  if (argc < min_args) {
    sqlite3_result_error(context, (std::string(spec.name) + ": too few arguments").c_str(), -1);
    return false;
  }
  const auto text = text_argument(argv[0]);
  if (!text || text->empty()) {
    if (!text) sqlite3_result_null(context);
    else sqlite3_result_error(context, (std::string(spec.name) + ": the instruction is empty").c_str(), -1);
    return false;
  }
  instruction = *text;
  values = json::array();
  if (std::string(spec.kind) == "match") {
    values.push_back(argument_json(argv[1]));
    domain = text_argument(argv[2]).value_or("");
  } else {
    if (fixed == 2) domain = text_argument(argv[1]).value_or("");
    for (int i = fixed; i < argc; ++i) values.push_back(argument_json(argv[i]));
  }
  if (std::all_of(values.begin(), values.end(), is_null_input)) {
    sqlite3_result_null(context);  // nothing to ask about
    return false;
  }
  return true;
}

void scalar_call(sqlite3_context* context, int argc, sqlite3_value** argv) {
  const auto* registration = static_cast<const Registration*>(sqlite3_user_data(context));
  std::string instruction, domain;
  json values;
  if (!read_call(context, *registration->spec, argc, argv, instruction, domain, values)) return;
  auto& state = *registration->state;
  answer(context, state, function_state(state, registration->spec->kind, instruction, domain),
         values.size() == 1 ? values[0] : values);
}

struct Group {
  bool started = false;
  std::string instruction, domain;
  json rows;
};

void aggregate_step(sqlite3_context* context, int argc, sqlite3_value** argv) {
  auto** slot = static_cast<Group**>(sqlite3_aggregate_context(context, sizeof(Group*)));
  if (!slot) return sqlite3_result_error_nomem(context);
  if (!*slot) *slot = new Group{};
  Group& group = **slot;
  const auto* registration = static_cast<const Registration*>(sqlite3_user_data(context));
  std::string instruction, domain;
  json values;
  if (!read_call(context, *registration->spec, argc, argv, instruction, domain, values)) return;
  if (!group.started) group = {true, instruction, domain, json::array()};
  const json row = values.size() == 1 ? values[0] : values;
  if (std::find(group.rows.begin(), group.rows.end(), row) == group.rows.end()) group.rows.push_back(row);
}

void aggregate_final(sqlite3_context* context) {
  auto** slot = static_cast<Group**>(sqlite3_aggregate_context(context, 0));
  Group* group = slot ? *slot : nullptr;
  const auto* registration = static_cast<const Registration*>(sqlite3_user_data(context));
  if (!group || !group->started || group->rows.empty()) {
    sqlite3_result_null(context);
  } else {
    auto& state = *registration->state;
    answer(context, state, function_state(state, registration->spec->kind, group->instruction, group->domain),
           group->rows);
  }
  delete group;
}

// concat(value, ...) as SQLite 3.44 defines it (NULLs skipped), for hybrid queries written against newer SQLite.
void concat_call(sqlite3_context* context, int argc, sqlite3_value** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i)
    if (const auto text = text_argument(argv[i])) out += *text;
  sqlite3_result_text(context, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

}  // namespace

void register_llm_functions(SessionState* state) {
  if (sqlite3_create_function_v2(state->db, "concat", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, concat_call,
                                 nullptr, nullptr, nullptr) != SQLITE_OK)
    throw Error(std::string("hybrid session: cannot register concat: ") + sqlite3_errmsg(state->db));
#ifdef SQLITE_SUBTYPE
  constexpr int kReadsSubtypes = SQLITE_SUBTYPE;  // keeps json_object's mark on arguments (SQLite >= 3.30)
#else
  constexpr int kReadsSubtypes = 0;
#endif
  constexpr int kFlags = SQLITE_UTF8 | kReadsSubtypes;
  for (const auto& spec : kFunctions) {
    auto* registration = new Registration{state, &spec};
    auto destroy = [](void* p) { delete static_cast<Registration*>(p); };
    const int rc = spec.aggregate
                       ? sqlite3_create_function_v2(state->db, spec.name, -1, kFlags, registration, nullptr,
                                                    aggregate_step, aggregate_final, destroy)
                       : sqlite3_create_function_v2(state->db, spec.name, -1, kFlags, registration, scalar_call,
                                                    nullptr, nullptr, destroy);
    if (rc != SQLITE_OK)
      throw Error(std::string("hybrid session: cannot register ") + spec.name + ": " + sqlite3_errmsg(state->db));
  }
}

}  // namespace relmem::hybrid
