// relmem._relmem.llm: the LLM layer. Every chat() releases the GIL while the LLM works; a Python callable behind
// CallableLLM takes it back for the duration of its own call, so Python servers and threads keep running.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/llm/cached_llm.hpp"
#include "relmem/llm/callable_llm.hpp"
#include "relmem/llm/metered_llm.hpp"
#include "relmem/llm/openai_chat.hpp"
#include "relmem/llm/token_ledger.hpp"

namespace py = pybind11;
using namespace pybind11::literals;
using namespace relmem;

namespace relmem_python {
namespace {

std::string type_name(py::handle object) { return py::str(py::type::of(object).attr("__name__")); }

std::string text_field(py::handle value, const std::string& what) {
  if (!py::isinstance<py::str>(value)) throw Error(what + " must be a str, not " + type_name(value));
  return value.cast<std::string>();
}

// Accepts a str (one user message) or a sequence of {"role": ..., "content": ...} dicts or (role, content) pairs.
std::vector<ChatMessage> messages_from_python(py::handle messages) {
  if (py::isinstance<py::str>(messages)) return {{"user", messages.cast<std::string>()}};
  if (!py::isinstance<py::sequence>(messages)) {
    throw Error("messages must be a str or a list of {'role', 'content'} dicts, not " + type_name(messages));
  }
  std::vector<ChatMessage> out;
  for (py::handle item : messages) {
    const std::string where = "message " + std::to_string(out.size());
    if (py::isinstance<py::dict>(item)) {
      const auto dict = item.cast<py::dict>();
      if (!dict.contains("role") || !dict.contains("content")) throw Error(where + " needs 'role' and 'content'");
      out.push_back({text_field(dict["role"], where + " role"), text_field(dict["content"], where + " content")});
    } else if (py::isinstance<py::sequence>(item) && !py::isinstance<py::str>(item) && py::len(item) == 2) {
      const auto pair = item.cast<py::sequence>();
      out.push_back({text_field(pair[0], where + " role"), text_field(pair[1], where + " content")});
    } else {
      throw Error(where + " must be a {'role', 'content'} dict or a (role, content) pair, not " + type_name(item));
    }
  }
  return out;
}

std::vector<std::string> stop_from_python(py::handle stop) {
  if (stop.is_none()) return {};
  if (py::isinstance<py::str>(stop)) return {stop.cast<std::string>()};
  std::vector<std::string> out;
  for (py::handle item : stop) out.push_back(text_field(item, "each stop sequence"));
  return out;
}

py::list messages_to_python(const std::vector<ChatMessage>& messages) {
  py::list out;
  for (const auto& m : messages) out.append(py::dict("role"_a = m.role, "content"_a = text_to_python(m.content)));
  return out;
}

TokenUsage usage_from_python(py::handle usage) {
  if (py::isinstance<TokenUsage>(usage)) return usage.cast<TokenUsage>();
  if (py::isinstance<py::dict>(usage)) {
    const auto dict = usage.cast<py::dict>();
    if (!dict.contains("prompt_tokens") || !dict.contains("completion_tokens")) {
      throw Error("a usage dict needs 'prompt_tokens' and 'completion_tokens'");
    }
    return {dict["prompt_tokens"].cast<int64_t>(), dict["completion_tokens"].cast<int64_t>(), false};
  }
  if (py::isinstance<py::sequence>(usage) && py::len(usage) == 2) {
    const auto pair = usage.cast<py::sequence>();
    return {pair[0].cast<int64_t>(), pair[1].cast<int64_t>(), false};
  }
  throw Error("usage must be a Usage, a dict or a (prompt_tokens, completion_tokens) pair, not " + type_name(usage));
}

// What a Python LLM function may return: a str (usage estimated), (text, usage), or a Response.
ChatResponse response_from_python(py::handle result, const std::vector<ChatMessage>& messages) {
  if (py::isinstance<py::str>(result)) {
    const auto text = result.cast<std::string>();
    return {text, estimate_usage(messages, text), "stop", false};
  }
  if (py::isinstance<ChatResponse>(result)) return result.cast<ChatResponse>();
  if (py::isinstance<py::tuple>(result) && py::len(result) == 2) {
    const auto pair = result.cast<py::tuple>();
    return {text_field(pair[0], "the returned text"), usage_from_python(pair[1]), "stop", false};
  }
  throw Error("returned " + type_name(result) + "; expected str, (str, usage) or relmem.llm.Response");
}

std::string default_callable_name(py::handle fn) {
  const py::object qualname = py::getattr(fn, "__qualname__", py::getattr(py::type::of(fn), "__qualname__"));
  const py::object module = py::getattr(fn, "__module__", py::none());
  return "callable:" + (module.is_none() ? std::string() : py::str(module).cast<std::string>() + ".") +
         py::str(qualname).cast<std::string>();
}

// Whether fn takes grammar= and json_schema= (by name or through **kwargs); functions that do not get neither.
bool takes_constraints(py::handle fn) {
  try {
    const py::module_ inspect = py::module_::import("inspect");
    const py::object var_keyword = inspect.attr("Parameter").attr("VAR_KEYWORD");
    for (py::handle parameter : inspect.attr("signature")(fn).attr("parameters").attr("values")()) {
      if (py::object(parameter.attr("kind")).equal(var_keyword)) return true;
      if (py::str(parameter.attr("name")).cast<std::string>() == "grammar") return true;
    }
    return false;
  } catch (py::error_already_set&) {  // builtins without a signature: pass nothing they may not know
    return false;
  }
}

std::shared_ptr<LLM> callable_llm(py::function fn, std::string name) {
  const bool constraints = takes_constraints(fn);
  // The Python function may be released from a thread without the GIL (when C++ drops the last reference).
  std::shared_ptr<py::function> held(new py::function(std::move(fn)), [](py::function* f) {
    py::gil_scoped_acquire gil;
    delete f;
  });
  ChatFunction call = [held, name, constraints](const std::vector<ChatMessage>& messages,
                                                 const ChatParams& params) {
    py::gil_scoped_acquire gil;
    try {
      py::dict kwargs("stage"_a = params.stage);
      if (params.temperature) kwargs["temperature"] = *params.temperature;
      if (params.max_tokens) kwargs["max_tokens"] = *params.max_tokens;
      if (!params.stop.empty()) kwargs["stop"] = params.stop;
      if (constraints && !params.grammar.empty()) kwargs["grammar"] = params.grammar;
      if (constraints && !params.json_schema.empty()) kwargs["json_schema"] = params.json_schema;
      return response_from_python((*held)(messages_to_python(messages), **kwargs), messages);
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) throw;
      throw Error("LLM callable '" + name + "' raised " + type_name(e.value()) + ": " +
                  py::str(e.value()).cast<std::string>());
    } catch (const py::cast_error& e) {
      throw Error("LLM callable '" + name + "' " + e.what());
    } catch (const Error& e) {
      throw Error("LLM callable '" + name + "' " + e.what());
    }
  };
  return std::make_shared<CallableLLM>(std::move(call), std::move(name));
}

// Any relmem LLM as it is; any other callable fn(messages, **params) wrapped in a CallableLLM.
std::shared_ptr<LLM> to_llm(py::handle object) {
  if (py::isinstance<LLM>(object)) return object.cast<std::shared_ptr<LLM>>();
  if (PyCallable_Check(object.ptr())) {
    const auto fn = py::reinterpret_borrow<py::function>(object);
    return callable_llm(fn, default_callable_name(fn));
  }
  throw Error("expected a relmem.llm.LLM or a callable fn(messages, **params), not " + type_name(object));
}

py::dict stage_tokens_dict(const StageTokens& t) {
  return py::dict("prompt_tokens"_a = t.prompt_tokens, "completion_tokens"_a = t.completion_tokens,
                  "total_tokens"_a = t.total_tokens(), "calls"_a = t.calls, "cached_calls"_a = t.cached_calls,
                  "estimated_calls"_a = t.estimated_calls);
}

std::string usage_repr(const TokenUsage& u) {
  return "Usage(prompt_tokens=" + std::to_string(u.prompt_tokens) +
         ", completion_tokens=" + std::to_string(u.completion_tokens) + (u.estimated ? ", estimated=True" : "") + ")";
}

void bind_values(py::module_& llm) {
  py::class_<TokenUsage>(llm, "Usage", "Token usage of one LLM call.")
      .def(py::init([](int64_t prompt, int64_t completion, bool estimated) {
             return TokenUsage{prompt, completion, estimated};
           }),
           "prompt_tokens"_a = 0, "completion_tokens"_a = 0, "estimated"_a = false)
      .def_readwrite("prompt_tokens", &TokenUsage::prompt_tokens)
      .def_readwrite("completion_tokens", &TokenUsage::completion_tokens)
      .def_readwrite("estimated", &TokenUsage::estimated, "True when counted at ~4 characters per token")
      .def_property_readonly("total_tokens", &TokenUsage::total_tokens)
      .def("to_dict",
           [](const TokenUsage& u) {
             return py::dict("prompt_tokens"_a = u.prompt_tokens, "completion_tokens"_a = u.completion_tokens,
                             "total_tokens"_a = u.total_tokens(), "estimated"_a = u.estimated);
           })
      .def("__eq__",
           [](const TokenUsage& a, const TokenUsage& b) {
             return a.prompt_tokens == b.prompt_tokens && a.completion_tokens == b.completion_tokens &&
                    a.estimated == b.estimated;
           })
      .def("__repr__", &usage_repr);

  py::class_<ChatResponse>(llm, "Response", "What chat() returns: the text and its token usage.")
      .def(py::init([](std::string text, TokenUsage usage, std::string finish_reason, bool cached) {
             return ChatResponse{std::move(text), usage, std::move(finish_reason), cached};
           }),
           "text"_a, "usage"_a = TokenUsage{}, "finish_reason"_a = "stop", "cached"_a = false)
      .def_readonly("text", &ChatResponse::text)
      .def_readonly("usage", &ChatResponse::usage)
      .def_readonly("finish_reason", &ChatResponse::finish_reason, "'length' when cut at max_tokens")
      .def_readonly("cached", &ChatResponse::cached, "True when CachedLLM answered from disk")
      .def("__repr__", [](const ChatResponse& r) {
        return "Response(text=" + py::repr(py::str(r.text)).cast<std::string>() + ", usage=" + usage_repr(r.usage) +
               (r.finish_reason == "stop" ? "" : ", finish_reason='" + r.finish_reason + "'") +
               (r.cached ? ", cached=True" : "") + ")";
      });

  py::class_<StageTokens>(llm, "StageTokens", "Token totals of one stage (or of all stages).")
      .def_readonly("prompt_tokens", &StageTokens::prompt_tokens)
      .def_readonly("completion_tokens", &StageTokens::completion_tokens)
      .def_property_readonly("total_tokens", &StageTokens::total_tokens)
      .def_readonly("calls", &StageTokens::calls)
      .def_readonly("cached_calls", &StageTokens::cached_calls)
      .def_readonly("estimated_calls", &StageTokens::estimated_calls)
      .def("to_dict", &stage_tokens_dict)
      .def("__repr__", [](const StageTokens& t) {
        return "StageTokens(" + py::repr(stage_tokens_dict(t)).cast<std::string>() + ")";
      });

  py::class_<TokenLedger, std::shared_ptr<TokenLedger>>(
      llm, "TokenLedger",
      "Token accounting per stage. Reset it per question; merge question ledgers into a run ledger. Thread-safe.")
      .def(py::init<>())
      .def("record", &TokenLedger::record, "stage"_a, "response"_a, "Adds one call's usage under `stage`.")
      .def("merge", &TokenLedger::merge, "other"_a, "Adds every stage of `other` to this ledger.")
      .def("reset", &TokenLedger::reset)
      .def("by_stage", &TokenLedger::by_stage, "{stage: StageTokens}; calls without a stage count as 'unspecified'.")
      .def("total", &TokenLedger::total)
      .def(
          "to_dict",
          [](const TokenLedger& ledger) {
            py::dict stages;
            for (const auto& [stage, tokens] : ledger.by_stage()) stages[py::str(stage)] = stage_tokens_dict(tokens);
            return py::dict("stages"_a = stages, "total"_a = stage_tokens_dict(ledger.total()));
          },
          "{'stages': {stage: {...}}, 'total': {...}}: prompt/completion/total tokens and call counts, JSON-ready.");
}

void bind_llms(py::module_& llm) {
  py::class_<LLM, std::shared_ptr<LLM>>(llm, "LLM", "Any LLM relmem can talk to. Not constructed directly.")
      .def(
          "chat",
          [](LLM& self, py::handle messages, const std::string& stage, std::optional<double> temperature,
             std::optional<int> max_tokens, py::handle stop, const std::string& grammar,
             const std::string& json_schema) {
            const auto list = messages_from_python(messages);
            const ChatParams params{temperature, max_tokens, stop_from_python(stop), stage, grammar, json_schema};
            py::gil_scoped_release release;
            return self.chat(list, params);
          },
          "messages"_a, "stage"_a = "", py::kw_only(), "temperature"_a = py::none(), "max_tokens"_a = py::none(),
          "stop"_a = py::none(), "grammar"_a = "", "json_schema"_a = "",
          "Asks the LLM. `messages`: list of {'role', 'content'} dicts or (role, content) pairs, or one str (a user\n"
          "message). `stage`: the pipeline stage served, by its own name (printable ASCII, '' for none).\n"
          "`grammar` (GBNF) or `json_schema` (JSON text) constrain decoding where the LLM can enforce them (the local\n"
          "llama.cpp model; JSON schemas also OpenAI-compatible endpoints); others ignore them. Returns a Response.\n"
          "Raises relmem.Error on invalid requests and when the LLM fails.")
      .def_property_readonly("identity", &LLM::identity,
                             "Names the model and output-changing defaults; part of the response-cache key.");

  llm.def("built_with_http", &built_with_http,
          "Whether relmem was built with libcurl (RELMEM_WITH_HTTP); without it OpenAIChat raises relmem.Error.");
  py::class_<OpenAIChat, LLM, std::shared_ptr<OpenAIChat>>(
      llm, "OpenAIChat",
      "An OpenAI-compatible /v1/chat/completions endpoint (OpenAI, vLLM, Ollama, llama.cpp server) over libcurl.\n"
      "Each request carries the header X-Relmem-Stage. Timeouts, dropped connections, 429 and 5xx are retried\n"
      "`max_retries` times with exponential backoff from `backoff` seconds (doubling, at most `max_backoff`); a\n"
      "Retry-After header (seconds) wins. Other 4xx and malformed bodies fail at once.")
      .def(py::init([](const std::string& base_url, const std::string& model, const std::string& api_key_env,
                       double timeout, int max_retries, double backoff, double max_backoff,
                       std::optional<double> temperature, std::optional<int> max_tokens) {
             OpenAIChatConfig config;
             config.base_url = base_url;
             config.model = model;
             config.api_key_env = api_key_env;
             config.timeout_seconds = timeout;
             config.retry.max_retries = max_retries;
             config.retry.initial_backoff_seconds = backoff;
             config.retry.max_backoff_seconds = max_backoff;
             config.temperature = temperature;
             config.max_tokens = max_tokens;
             return std::make_shared<OpenAIChat>(config);
           }),
           "base_url"_a, "model"_a, "api_key_env"_a = "RELMEM_LLM_API_KEY", "timeout"_a = 120.0, "max_retries"_a = 3,
           "backoff"_a = 1.0, "max_backoff"_a = 30.0, "temperature"_a = 0.0, "max_tokens"_a = py::none(),
           "`base_url` includes /v1 (e.g. http://localhost:11434/v1). The API key is read once from the environment\n"
           "variable named `api_key_env`; when it is unset no Authorization header is sent. `timeout` is per attempt\n"
           "(seconds). `temperature` and `max_tokens` apply when a request leaves them unset (None: server default).")
      .def_property_readonly("url", &OpenAIChat::url)
      .def_property_readonly("model", [](const OpenAIChat& self) { return self.config().model; });

  py::class_<CallableLLM, LLM, std::shared_ptr<CallableLLM>>(
      llm, "CallableLLM",
      "Any Python function fn(messages, **params) as an LLM. It receives the messages as a list of\n"
      "{'role', 'content'} dicts and the keywords stage=... (always) and temperature=, max_tokens=, stop=, grammar=,\n"
      "json_schema= (when set).\n"
      "It returns a str (usage then estimated at ~4 characters per token), a (text, usage) pair where usage is a\n"
      "Usage, a dict with prompt_tokens and completion_tokens, or a pair of ints, or a Response.\n"
      "Exceptions it raises become relmem.Error (KeyboardInterrupt and SystemExit pass through).")
      .def(py::init([](py::function fn, std::optional<std::string> name) {
             return std::static_pointer_cast<CallableLLM>(
                 callable_llm(fn, name ? *name : default_callable_name(fn)));
           }),
           "fn"_a, "name"_a = py::none(),
           "`name` stands in for the model in cache keys; default 'callable:<module>.<qualname>'.");

  py::class_<CachedLLM, LLM, std::shared_ptr<CachedLLM>>(
      llm, "CachedLLM",
      "A response cache in a SQLite file wrapping any LLM (or callable). The key is a SHA-256 of the LLM identity,\n"
      "the messages and the parameters (stage included). A hit returns the stored text with the usage of the\n"
      "original call and cached=True. Failures are not stored. Thread-safe; several processes may share a file.")
      .def(py::init([](py::handle inner, const std::string& path) {
             return std::make_shared<CachedLLM>(to_llm(inner), path);
           }),
           "llm"_a, "path"_a)
      .def_property_readonly("hits", &CachedLLM::hits)
      .def_property_readonly("misses", &CachedLLM::misses)
      .def("size", &CachedLLM::size, "Number of stored responses.")
      .def_property_readonly("path", &CachedLLM::path)
      .def_property_readonly("inner", &CachedLLM::inner);

  py::class_<MeteredLLM, LLM, std::shared_ptr<MeteredLLM>>(
      llm, "MeteredLLM", "Wraps any LLM (or callable) and records each successful call's usage in `ledger`.")
      .def(py::init([](py::handle inner, std::shared_ptr<TokenLedger> ledger) {
             return std::make_shared<MeteredLLM>(to_llm(inner), ledger ? ledger : std::make_shared<TokenLedger>());
           }),
           "llm"_a, "ledger"_a = nullptr)
      .def_property_readonly("ledger", &MeteredLLM::ledger)
      .def_property_readonly("inner", &MeteredLLM::inner);

  llm.def("as_llm", &to_llm, "object"_a,
          "A relmem LLM as it is; any other callable fn(messages, **params) wrapped in a CallableLLM.");
  llm.def("estimate_tokens", &estimate_tokens, "text"_a, "About 4 characters per token, rounded up.");
}

}  // namespace

void bind_llm(py::module_& m) {
  auto llm = m.def_submodule("llm", "The LLM layer: OpenAI-compatible HTTP, Python callables, cache, token ledger.");
  bind_values(llm);
  bind_llms(llm);
}

}  // namespace relmem_python
