"""The form of a fill reply, enforced while decoding.

A fill request (relmem.hybrid's Filler: fill columns of rows, list related values, map/match/qa items) asks for one
JSON object keyed by item number. `reply_schema` turns the request into a JSON schema: every item's key in order,
each value of its answer's type (a column's allowed values as an enum), null where the LLM does not know.
`constrained(llm)` wraps any relmem LLM so that every fill request it serves carries that schema as `json_schema=`
(the local llama.cpp model enforces it while decoding; OpenAI-compatible endpoints get it as response_format;
other LLMs ignore it and the Filler reads their text leniently, as before).

    llm = fill_contract.constrained(LocalModel.open().as_llm())
    session = hybrid.session("formula_1", path, schema, llm=llm, store=store)
"""
import json

from .._relmem import llm as _core

OPEN, CLOSE = "<request>\n", "\n</request>"
MAX_TEXT = 120  # longest text a fill may give; the longest dropped SWAN text is 100 characters (schools.Website)
TOKENS_PER_VALUE = 40  # completion budget per answered value (a 120-character text is about 30 tokens)

_SCALAR = {"TEXT": {"type": "string", "maxLength": MAX_TEXT}, "INTEGER": {"type": "integer"},
           "REAL": {"type": "number"}, "DATE": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
           "BOOLEAN": {"type": "boolean"}, "ANY": {"type": ["string", "number", "boolean"]}}


def request_payload(messages):
    """The fill request a chat carries (the JSON between <request> tags of a user message); None when it has none."""
    for message in messages:
        content = message.get("content", "") if isinstance(message, dict) else message[1]
        role = message.get("role") if isinstance(message, dict) else message[0]
        start, end = content.find(OPEN), content.rfind(CLOSE)
        if role != "user" or start < 0 or end < start:
            continue
        try:
            payload = json.loads(content[start + len(OPEN):end])
        except json.JSONDecodeError:
            continue
        if isinstance(payload, dict) and "task" in payload:
            return payload
    return None


def _value(answer):
    """One answer's value: its type (an enum of its allowed values when they are listed), or null."""
    if answer.get("allowed"):
        scalar = {"enum": list(dict.fromkeys(answer["allowed"]))}
    else:
        scalar = dict(_SCALAR.get(answer.get("type", "TEXT"), _SCALAR["TEXT"]))
    if answer.get("list"):
        return {"type": "array", "items": scalar}
    return {"anyOf": [scalar, {"type": "null"}]}


def _items(payload):
    return len(payload.get("rows") or payload.get("items") or [])


def reply_schema(payload):
    """The JSON schema of the reply to fill request `payload`: {"1": value, "2": value, ...}, every item in order;
    a fill of several columns answers {"<column>": value, ...} per item."""
    answers = payload.get("answers") or [{"name": "answer", "type": "TEXT"}]
    if payload.get("task") == "fill" and len(answers) > 1:
        names = [a["name"] for a in answers]
        item = {"type": "object", "properties": {a["name"]: _value(a) for a in answers}, "required": names,
                "additionalProperties": False}
    else:
        item = _value(answers[0])
    keys = [str(i) for i in range(1, _items(payload) + 1)]
    return {"type": "object", "properties": {k: {"$ref": "#/$defs/item"} for k in keys}, "required": keys,
            "additionalProperties": False, "$defs": {"item": item}}


def reply_budget(payload):
    """Completion tokens a reply to `payload` may need: TOKENS_PER_VALUE per value (a listed relation counts 4)."""
    answers = payload.get("answers") or [{}]
    per_item = sum(4 if a.get("list") else 1 for a in answers)
    return 16 + TOKENS_PER_VALUE * per_item * _items(payload)


def constrained(llm):
    """`llm` (any relmem LLM) answering fill requests under their reply schema, with a completion budget that fits
    the request; other chats pass through unchanged. Its identity is the inner LLM's plus '+fill-schema'."""
    inner = _core.as_llm(llm)

    def chat(messages, stage="", temperature=None, max_tokens=None, stop=None, grammar=None, json_schema=None):
        payload = None if grammar or json_schema else request_payload(messages)
        options = {"temperature": temperature, "max_tokens": max_tokens, "stop": stop,
                   "grammar": grammar or "", "json_schema": json_schema or ""}
        if payload is not None:
            options["json_schema"] = json.dumps(reply_schema(payload))
            options["max_tokens"] = max_tokens or reply_budget(payload)
        return inner.chat(messages, stage, **options)

    return _core.CallableLLM(chat, name=f"{inner.identity}+fill-schema")
