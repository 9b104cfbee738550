#include "relmem/llm/openai_protocol.hpp"

#include <nlohmann/json.hpp>

#include "../common/utf8.hpp"

namespace relmem {

using nlohmann::json;

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Token counts are integers on every server we know; tolerate floats and a missing field, reject the rest.
std::optional<int64_t> token_count(const json& usage, const char* field) {
  const auto it = usage.find(field);
  if (it == usage.end() || !it->is_number()) return std::nullopt;
  return it->get<int64_t>();
}

std::string describe(long status, const std::string& body) {
  return "(HTTP " + std::to_string(status) + "): " + body_snippet(body);
}

}  // namespace

std::string chat_completions_url(const std::string& base_url) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.empty()) throw Error("LLM base URL is empty");
  if (ends_with(url, "/chat/completions")) return url;
  return url + "/chat/completions";
}

std::string build_chat_request(const std::string& model, const std::vector<ChatMessage>& messages,
                               const ChatParams& params) {
  json body = {{"model", model}, {"stream", false}};
  json& list = body["messages"] = json::array();
  for (const auto& message : messages) list.push_back({{"role", message.role}, {"content", message.content}});
  if (params.temperature) body["temperature"] = *params.temperature;
  if (params.max_tokens) body["max_tokens"] = *params.max_tokens;
  if (!params.stop.empty()) body["stop"] = params.stop;
  // OpenAI's structured outputs; servers without them ignore the field or answer 400, and the caller's parser
  // reads free text either way. A GBNF grammar has no OpenAI field and is not sent.
  if (!params.json_schema.empty()) {
    const json schema = json::parse(params.json_schema, nullptr, /*allow_exceptions=*/false);
    if (schema.is_discarded() || !schema.is_object()) throw Error("the request's JSON schema is not a JSON object");
    body["response_format"] = {{"type", "json_schema"},
                               {"json_schema", {{"name", "relmem_output"}, {"strict", true}, {"schema", schema}}}};
  }
  // Invalid UTF-8 in a prompt (e.g. a database value) is replaced rather than aborting the request.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

ChatResponse parse_chat_response(long status, const std::string& body, const std::vector<ChatMessage>& messages) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw Error("LLM response is not valid JSON " + describe(status, body));
  if (!parsed.is_object()) throw Error("LLM response is not a JSON object " + describe(status, body));
  const auto choices = parsed.find("choices");
  if (choices == parsed.end() || !choices->is_array() || choices->empty()) {
    throw Error("LLM response has no choices " + describe(status, body));
  }
  const json& choice = choices->front();
  const auto message = choice.find("message");
  if (!choice.is_object() || message == choice.end() || !message->is_object()) {
    throw Error("LLM response choice has no message " + describe(status, body));
  }
  const auto content = message->find("content");
  if (content == message->end() || !content->is_string()) {
    throw Error("LLM response message has no text content " + describe(status, body));
  }

  ChatResponse response;
  response.text = content->get<std::string>();
  const auto finish = choice.find("finish_reason");
  if (finish != choice.end() && finish->is_string()) response.finish_reason = finish->get<std::string>();

  const auto usage = parsed.find("usage");
  std::optional<int64_t> prompt, completion;
  if (usage != parsed.end() && usage->is_object()) {
    prompt = token_count(*usage, "prompt_tokens");
    completion = token_count(*usage, "completion_tokens");
  }
  if (prompt && completion) {
    response.usage.prompt_tokens = *prompt;
    response.usage.completion_tokens = *completion;
  } else {
    response.usage = estimate_usage(messages, response.text);
  }
  return response;
}

std::string body_snippet(const std::string& body, size_t max_chars) {
  // The snippet ends up in exception messages and Python strings, so it must be valid UTF-8 on one line.
  std::string snippet;
  size_t i = 0;
  while (i < body.size() && i < max_chars) {
    const auto lead = static_cast<unsigned char>(body[i]);
    const size_t length = utf8_sequence_length(body, i);
    if (length == 0) {
      snippet += '?';
      ++i;
    } else if (lead < 0x20 || lead == 0x7F) {
      snippet += ' ';
      ++i;
    } else {
      snippet.append(body, i, length);
      i += length;
    }
  }
  if (i < body.size()) snippet += "...";
  if (snippet.empty()) snippet = "<empty body>";
  return snippet;
}

}  // namespace relmem
