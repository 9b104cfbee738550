"""relmem's tools for agent frameworks that call functions instead of speaking MCP.

    definitions = function_definitions(toolbox.tools, "openai")     # or "anthropic"
    reply = dispatch(toolbox, tool_call)                              # the message that answers the call

dispatch() accepts an OpenAI Chat Completions tool call ({"id", "function": {"name", "arguments"}}), an OpenAI
Responses function call ({"type": "function_call", "call_id", "name", "arguments"}) or an Anthropic tool_use block
({"type": "tool_use", "id", "name", "input"}), and answers in the same format. Errors come back in the reply with
the reason; dispatch() raises only for a tool call it cannot read at all.
"""
import json

from .tools import ToolError

FORMATS = ("openai", "anthropic")


def function_definitions(tools, format="openai"):  # noqa: A002 - the CLI's --format
    if format == "openai":
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.input_schema}} for t in tools]
    if format == "anthropic":
        return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    raise ValueError(f"unknown function-calling format {format!r} (known: {', '.join(FORMATS)})")


def _read_call(tool_call):
    """(format, call id, tool name, arguments or an error message)."""
    if not isinstance(tool_call, dict):
        raise ValueError("a tool call must be a dict")
    if tool_call.get("type") == "tool_use":
        return "anthropic", tool_call.get("id"), tool_call.get("name"), tool_call.get("input", {})
    if tool_call.get("type") == "function_call":
        kind, call_id, function = "responses", tool_call.get("call_id"), tool_call
    elif isinstance(tool_call.get("function"), dict):
        kind, call_id, function = "chat", tool_call.get("id"), tool_call["function"]
    else:
        raise ValueError("not a tool call: expected an OpenAI tool call or function_call, or an Anthropic tool_use")
    arguments = function.get("arguments") or "{}"
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as error:
            arguments = f"arguments are not valid JSON: {error}"
    return kind, call_id, function.get("name"), arguments


def call_tool(toolbox, name, arguments):
    """(ok, text): the result as JSON text, or the reason it failed."""
    if isinstance(arguments, str):
        return False, f"{name}: {arguments}"
    try:
        result = toolbox.call(name, arguments)
    except ToolError as error:
        return False, str(error)
    except Exception as error:  # noqa: BLE001 - the model gets the reason, the agent keeps running
        return False, f"{name} failed: {type(error).__name__}: {error}"
    return True, json.dumps(result, ensure_ascii=False, default=str)


def dispatch(toolbox, tool_call):
    kind, call_id, name, arguments = _read_call(tool_call)
    ok, text = call_tool(toolbox, name, arguments)
    if kind == "anthropic":
        return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": not ok}
    text = text if ok else f"error: {text}"
    if kind == "responses":
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    return {"role": "tool", "tool_call_id": call_id, "content": text}
