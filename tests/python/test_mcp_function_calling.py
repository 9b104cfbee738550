"""The tools as function-calling definitions (`relmem tools`) and dispatch() of OpenAI and Anthropic tool calls."""
import json
import subprocess
import sys

import pytest
from mcp_support import build_demo_memory

from relmem.mcp import Toolbox, dispatch, function_definitions
from relmem.mcp.definitions import define_tools


@pytest.fixture(scope="module")
def toolbox(demo_dir, tmp_path_factory):
    memory = build_demo_memory(demo_dir, tmp_path_factory.mktemp("memory"))
    with Toolbox.open(str(demo_dir), memory=str(memory)) as toolbox:
        yield toolbox


@pytest.mark.parametrize("format", ["openai", "anthropic"])
def test_relmem_tools_prints_the_definitions(format):
    done = subprocess.run([sys.executable, "-m", "relmem.cli", "tools", "--format", format, "--max-rows", "77"],
                          capture_output=True, text=True, check=True)
    printed = json.loads(done.stdout)
    assert printed == function_definitions(define_tools(max_rows=77), format)
    names = [d["function"]["name"] if format == "openai" else d["name"] for d in printed]
    assert names == [t.name for t in define_tools()]
    run_sql = printed[names.index("run_sql")]
    schema = run_sql["function"]["parameters"] if format == "openai" else run_sql["input_schema"]
    assert schema["properties"]["max_rows"]["maximum"] == 77 and schema["required"] == ["database", "sql"]


def test_unknown_format_is_an_error():
    with pytest.raises(ValueError, match="unknown function-calling format"):
        function_definitions(define_tools(), "xml")


def test_openai_chat_and_responses_calls(toolbox):
    reply = dispatch(toolbox, {"id": "call_1", "type": "function", "function": {
        "name": "find_values", "arguments": json.dumps({"database": "restaurants", "text": "Los Angeles"})}})
    assert reply["role"] == "tool" and reply["tool_call_id"] == "call_1"
    assert json.loads(reply["content"])["matches"][0]["value"] == "LA"
    reply = dispatch(toolbox, {"type": "function_call", "call_id": "fc_1", "name": "run_sql",
                               "arguments": '{"database": "singers", "sql": "DROP TABLE singer"}'})
    assert reply["type"] == "function_call_output" and reply["output"].startswith("error: run_sql refused")
    broken = dispatch(toolbox, {"id": "call_2", "function": {"name": "list_databases", "arguments": "{oops"}})
    assert broken["content"].startswith("error: list_databases: arguments are not valid JSON")


def test_anthropic_tool_use(toolbox):
    reply = dispatch(toolbox, {"type": "tool_use", "id": "toolu_1", "name": "select_databases",
                               "input": {"question": "How many flights leave from Boston?", "k": 2}})
    assert reply["type"] == "tool_result" and reply["tool_use_id"] == "toolu_1" and reply["is_error"] is False
    assert json.loads(reply["content"])["ranking"][0]["database"] == "flights"
    unknown = dispatch(toolbox, {"type": "tool_use", "id": "toolu_2", "name": "rm_rf", "input": {}})
    assert unknown["is_error"] is True and "unknown tool" in unknown["content"]
    wrong = dispatch(toolbox, {"type": "tool_use", "id": "toolu_3", "name": "describe_database", "input": {}})
    assert wrong["is_error"] is True and "required property 'database'" in wrong["content"]


def test_a_call_that_is_not_a_tool_call_raises(toolbox):
    with pytest.raises(ValueError, match="not a tool call"):
        dispatch(toolbox, {"name": "list_databases"})
