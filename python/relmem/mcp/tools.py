"""A tool: name, JSON Schemas for its input and its structured result, and the function that answers it."""
import json
from dataclasses import dataclass
from typing import Callable

from .schema import problem


class ToolError(Exception):
    """A call the tool refuses or cannot answer; its message goes back to the model as a tool error."""


@dataclass
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict
    output_schema: dict
    handler: Callable  # handler(arguments, call) -> dict matching output_schema; call is a session.Call or None
    read_only: bool = True
    open_world: bool = False  # True when the tool reaches beyond the served folder (an LLM)

    def definition(self):
        """The tool as tools/list describes it."""
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input_schema, "outputSchema": self.output_schema,
                "annotations": {"title": self.title, "readOnlyHint": self.read_only, "destructiveHint": False,
                                "idempotentHint": self.read_only and not self.open_world,
                                "openWorldHint": self.open_world}}

    def run(self, arguments, call=None):
        """The structured result; raises ToolError for arguments that break the input schema and for refusals."""
        if arguments is None:
            arguments = {}
        found = problem(self.input_schema, arguments)
        if found:
            raise ToolError(f"invalid arguments for {self.name}: {found}")
        return self.handler(arguments, call)


def result_content(structured):
    """MCP's tools/call result for a structured answer: the object plus the same JSON as a text block."""
    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"), default=str)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}


def error_content(message):
    return {"content": [{"type": "text", "text": message}], "isError": True}


def obj(properties, required=(), description=None, closed=True):
    """A JSON object schema; closed (no other properties) unless closed=False, as results are."""
    schema = {"type": "object", "properties": properties, "required": list(required)}
    if closed:
        schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def string(description, **extra):
    return {"type": "string", "description": description, **extra}


def integer(description, minimum=None, maximum=None, default=None):
    schema = {"type": "integer", "description": description}
    for key, value in (("minimum", minimum), ("maximum", maximum), ("default", default)):
        if value is not None:
            schema[key] = value
    return schema


def array(items, description=None):
    schema = {"type": "array", "items": items}
    if description:
        schema["description"] = description
    return schema


NUMBER = {"type": "number"}
STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
ANY = {}
NULLABLE_STRING = {"type": ["string", "null"]}
