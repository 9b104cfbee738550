"""The client's own LLM as relmem's LLM, through MCP sampling (sampling/createMessage).

    llm = sampling_llm(call)           # call: the session.Call of the tools/call being served
    Pipeline.default(catalog, llm, ...)

Each chat of the pipeline becomes one sampling request on the channel of that tools/call; the client (with its
user's approval) runs its LLM and answers. System messages become the request's systemPrompt.
"""
from .. import Error
from ..llm import CallableLLM

DEFAULT_MAX_TOKENS = 1024


class SamplingChat:
    """fn(messages, **params) -> str over sampling/createMessage, for relmem.llm.CallableLLM."""

    def __init__(self, call, timeout=120.0, max_tokens=DEFAULT_MAX_TOKENS):
        self.call = call
        self.timeout = timeout
        self.max_tokens = max_tokens

    def __call__(self, messages, stage="", temperature=None, max_tokens=None, stop=None, **_):
        system = [m["content"] for m in messages if m["role"] == "system"]
        turns = [{"role": "assistant" if m["role"] == "assistant" else "user",
                  "content": {"type": "text", "text": m["content"]}} for m in messages if m["role"] != "system"]
        params = {"messages": turns, "maxTokens": max_tokens or self.max_tokens, "includeContext": "none",
                  "modelPreferences": {"intelligencePriority": 0.8, "speedPriority": 0.5},
                  "metadata": {"relmem_stage": stage}}
        if system:
            params["systemPrompt"] = "\n\n".join(system)
        if temperature is not None:
            params["temperature"] = temperature
        if stop:
            params["stopSequences"] = list(stop)
        return response_text(self.call.request("sampling/createMessage", params, self.timeout))


def response_text(result):
    """The text of a CreateMessageResult, whose content is one block or (MCP 2025-11-25) a list of blocks."""
    content = result.get("content") if isinstance(result, dict) else None
    blocks = content if isinstance(content, list) else [content]
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and
             isinstance(b.get("text"), str)]
    if not texts:
        raise Error("the client's LLM answered the sampling request without text")
    return "".join(texts)


def sampling_llm(call, timeout=120.0):
    """A relmem LLM that asks the client of `call`."""
    return CallableLLM(SamplingChat(call, timeout), name="mcp-sampling")
