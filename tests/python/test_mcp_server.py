"""The MCP server in process: lifecycle, every tool with valid and invalid arguments, resources, JSON-RPC errors."""
import json

import pytest
from mcp_support import LA_QUESTION, build_demo_memory

from relmem.mcp import McpServer, Toolbox
from relmem.mcp.schema import problem
from relmem.mcp.session import Session


class Recorder:
    """A channel that records what the server sends the client."""

    def __init__(self):
        self.sent = []

    def send(self, message):
        self.sent.append(message)


@pytest.fixture(scope="module")
def memory_dir(demo_dir, tmp_path_factory):
    return build_demo_memory(demo_dir, tmp_path_factory.mktemp("memory"))


@pytest.fixture(scope="module")
def toolbox(demo_dir, memory_dir):
    limits = {"timeout": 1.0, "max_rows": 50, "max_result_bytes": 4000}
    with Toolbox.open(str(demo_dir), memory=str(memory_dir), **limits) as toolbox:
        yield toolbox


@pytest.fixture
def rpc(toolbox):
    server, session = McpServer(toolbox), Session()
    ids = iter(range(1, 10**6))

    def send(method, params=None):
        message = {"jsonrpc": "2.0", "id": next(ids), "method": method}
        if params is not None:
            message["params"] = params
        return server.handle(session, message, Recorder())

    send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})
    send.server, send.session = server, session
    return send


def call(rpc, name, **arguments):
    reply = rpc("tools/call", {"name": name, "arguments": arguments})
    return reply["result"]


def structured(rpc, name, **arguments):
    result = call(rpc, name, **arguments)
    assert result["isError"] is False, result["content"][0]["text"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"]


def tool_error(rpc, name, **arguments):
    result = call(rpc, name, **arguments)
    assert result["isError"] is True and "structuredContent" not in result
    return result["content"][0]["text"]


def test_initialize_negotiates_the_version(toolbox):
    server = McpServer(toolbox)
    for asked, answered in [("2025-06-18", "2025-06-18"), ("2024-11-05", "2024-11-05"), ("1999-01-01", "2025-11-25")]:
        reply = server.handle(Session(), {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                          "params": {"protocolVersion": asked, "capabilities": {}}}, Recorder())
        result = reply["result"]
        assert result["protocolVersion"] == answered
        assert set(result["capabilities"]) == {"tools", "resources"}
        assert result["serverInfo"]["name"] == "relmem"
    bad = server.handle(Session(), {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}, Recorder())
    assert bad["error"]["code"] == -32602


def test_every_tool_declares_its_schemas(rpc):
    tools = rpc("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["list_databases", "describe_database", "select_databases", "find_values",
                                          "link_values", "check_sql", "run_sql", "ask"]
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object" and tool["outputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
        assert tool["annotations"]["readOnlyHint"] is True
        assert not any("path" in name for name in tool["inputSchema"]["properties"])


def test_results_match_their_output_schemas(rpc):
    tools = {t["name"]: t for t in rpc("tools/list")["result"]["tools"]}
    calls = {"list_databases": {}, "describe_database": {"database": "singers"},
             "select_databases": {"question": LA_QUESTION}, "find_values": {"database": "restaurants", "text": "LA"},
             "link_values": {"database": "restaurants", "question": LA_QUESTION},
             "check_sql": {"database": "singers", "sql": "SELECT name FROM singer"},
             "run_sql": {"database": "singers", "sql": "SELECT * FROM singer"}, "ask": {"question": LA_QUESTION}}
    assert set(calls) == set(tools)
    for name, arguments in calls.items():
        result = structured(rpc, name, **arguments)
        assert problem(tools[name]["outputSchema"], result, name) is None


def test_list_and_describe_databases(rpc):
    listing = structured(rpc, "list_databases")
    assert listing["count"] == 7
    restaurants = next(d for d in listing["databases"] if d["name"] == "restaurants")
    assert {"name": "restaurant", "rows": 120} in restaurants["tables"]
    assert restaurants["card"].startswith("Restaurants with their cuisine") and "\n" not in restaurants["card"]

    described = structured(rpc, "describe_database", database="restaurants", samples=2)
    assert "CREATE TABLE \"restaurant\"" in described["ddl"]
    review = next(t for t in described["tables"] if t["name"] == "review")
    assert {"column": "restaurant_id", "references_table": "restaurant", "references_column": "id"} \
        in review["foreign_keys"]
    city = next(c for c in described["tables"][0]["columns"] if c["name"] == "city")
    assert len(city["samples"]) == 2 and set(city["samples"]) <= {"LA", "SF", "NYC", "CHI", "SEA", "BOS", "HOU", "MIA"}
    assert structured(rpc, "describe_database", database="restaurants", samples=0)["tables"][0]["columns"][0][
        "samples"] == []


def test_select_databases_ranks_and_splits_composite_questions(rpc):
    single = structured(rpc, "select_databases", question=LA_QUESTION, k=3)
    assert single["parts"] == [LA_QUESTION] and "part_rankings" not in single
    assert single["ranking"][0]["database"] == "restaurants" and len(single["ranking"]) == 3
    assert 0 <= single["ranking"][0]["probability"] <= 1 and single["selected"]
    composite = structured(rpc, "select_databases", k=2, question="Which question has a larger number as its "
                           "answer. Q1: How many singers are there?; Q2: How many flights leave from Boston?")
    assert [p["part"] for p in composite["part_rankings"]] == composite["parts"] and len(composite["parts"]) == 2
    assert [p["ranking"][0]["database"] for p in composite["part_rankings"]] == ["singers", "flights"]
    split = structured(rpc, "select_databases", k=2, question="singers and flights from Boston",
                       parts=["How many singers are there?", " ", "How many flights leave from Boston?"])
    assert split["parts"] == ["How many singers are there?", "How many flights leave from Boston?"]
    assert [p["ranking"][0]["database"] for p in split["part_rankings"]] == ["singers", "flights"]
    assert {m["database"] for m in split["ranking"]} == {"singers", "flights"}
    assert {"singers", "flights"} <= set(split["selected"])


def test_find_values_maps_what_people_write_to_what_is_stored(rpc):
    for where in [{}, {"table": "restaurant"}, {"table": "restaurant", "column": "city"}]:
        found = structured(rpc, "find_values", database="restaurants", text="Los Angeles", k=3, **where)
        assert found["matches"][0]["value"] == "LA", where
        assert (found["matches"][0]["table"], found["matches"][0]["column"]) == ("restaurant", "city")
    assert "unknown column" in tool_error(rpc, "find_values", database="restaurants", text="x", table="restaurant",
                                          column="nope")
    assert "unknown table" in tool_error(rpc, "find_values", database="restaurants", text="x", table="nope")
    assert "give the table" in tool_error(rpc, "find_values", database="restaurants", text="x", column="city")


def test_link_values(rpc):
    linked = structured(rpc, "link_values", database="restaurants", question=LA_QUESTION)
    la = next(link for link in linked["links"] if link["value"] == "LA")
    assert la["span"] == "Los Angeles" and LA_QUESTION[la["start"]:la["end"]] == "Los Angeles"


def test_check_sql_reports_diagnostics_and_unstored_values(rpc):
    checked = structured(rpc, "check_sql", database="restaurants",
                         sql="SELECT AVG(rating) FROM restaurant WHERE city = 'Los Angeles'")
    assert checked["ok"] is False
    [check] = checked["value_checks"]
    assert (check["status"], check["similar"][0]["value"]) == ("not_found", "LA")
    assert "LA" in checked["value_feedback"]
    broken = structured(rpc, "check_sql", database="restaurants", sql="SELECT nme FROM restaurant")
    assert broken["ok"] is False and broken["diagnostics"][0]["severity"] == "error"
    assert structured(rpc, "check_sql", database="restaurants", sql="SELECT name FROM restaurant")["ok"] is True


def test_run_sql_limits_and_refusals(rpc):
    rows = structured(rpc, "run_sql", database="restaurants", sql="SELECT id, name FROM restaurant ORDER BY id",
                      max_rows=3)
    assert rows["columns"] == ["id", "name"] and [r[0] for r in rows["rows"]] == [1, 2, 3]
    assert rows["truncated"] is True and "more than 3 rows" in rows["truncated_reason"]
    capped = structured(rpc, "run_sql", database="restaurants", max_rows=50,
                        sql="SELECT name, printf('%.*c', 200, 'x') FROM restaurant")
    assert len(json.dumps(capped["rows"])) <= 4000 and "4000 bytes" in capped["truncated_reason"]
    odd = structured(rpc, "run_sql", database="restaurants",
                     sql="SELECT x'00ff', randomblob(100), 1e999, printf('%.*c', 5000, 'x')")["rows"][0]
    assert odd[0] == "x'00ff'" and odd[1].startswith("<blob of 100 bytes") and odd[2] == "inf"
    assert odd[3].endswith("[3000 more characters]")
    assert tool_error(rpc, "run_sql", database="restaurants", sql="DELETE FROM restaurant").startswith(
        "run_sql refused")
    assert "timeout" in tool_error(rpc, "run_sql", database="restaurants",
                                   sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                                       "SELECT count(*) FROM c")
    assert "no such column" in tool_error(rpc, "run_sql", database="restaurants", sql="SELECT nme FROM restaurant")
    assert "'max_rows' must be <= 50" in tool_error(rpc, "run_sql", database="restaurants", sql="SELECT 1",
                                                    max_rows=51)


def test_ask_without_any_llm_says_so(rpc):
    answer = structured(rpc, "ask", question=LA_QUESTION)
    assert answer["llm"] == "none" and "No LLM is available" in answer["note"]
    assert "restaurants" in answer["answer"]


@pytest.mark.parametrize("name, arguments, reason", [
    ("describe_database", {}, "missing the required property 'database'"),
    ("describe_database", {"database": 7}, "'database' must be string, not integer"),
    ("describe_database", {"database": "../../etc/passwd"}, "unknown database '../../etc/passwd'"),
    ("describe_database", {"database": "singers", "path": "/tmp"}, "unknown property 'path'"),
    ("select_databases", {"question": "x", "k": "5"}, "'k' must be integer, not string"),
    ("select_databases", {"question": "x", "k": 0}, "'k' must be >= 1"),
    ("select_databases", {"question": ""}, "at least 1 character"),
    ("select_databases", {"question": "x", "parts": []}, "at least 1 item"),
    ("select_databases", {"question": "x", "parts": ["  "]}, "every part is blank"),
    ("select_databases", {"question": "x", "parts": "How many?"}, "must be array"),
    ("run_sql", {"database": "singers", "sql": "SELECT 1", "max_rows": True}, "must be integer, not boolean"),
    ("link_values", {"database": "singers", "question": "x", "min_score": 2}, "must be <= 1"),
])
def test_invalid_arguments_are_tool_errors(rpc, name, arguments, reason):
    assert reason in tool_error(rpc, name, **arguments)


def test_protocol_errors(rpc):
    unknown = rpc("tools/call", {"name": "drop_database", "arguments": {}})
    assert unknown["error"]["code"] == -32602 and "unknown tool" in unknown["error"]["message"]
    assert rpc("no/such/method")["error"]["code"] == -32601
    assert rpc("tools/call", {"name": "list_databases", "arguments": [1]})["result"]["isError"] is True
    assert rpc("ping")["result"] == {}
    missing = rpc("resources/read", {"uri": "relmem://nope/schema"})
    assert missing["error"]["code"] == -32002
    assert rpc("resources/read", {})["error"]["code"] == -32602


def test_schema_resources(rpc):
    resources = rpc("resources/list")["result"]["resources"]
    assert len(resources) == 7 and any(r["uri"] == "relmem://singers/schema" for r in resources)
    [content] = rpc("resources/read", {"uri": "relmem://singers/schema"})["result"]["contents"]
    assert content["mimeType"] == "text/plain" and "singer" in content["text"]
    templates = rpc("resources/templates/list")["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "relmem://{database}/schema"


def test_notifications_get_no_answer_and_cancelled_calls_are_dropped(rpc):
    assert rpc.server.handle(rpc.session, {"jsonrpc": "2.0", "method": "notifications/initialized"}, None) is None
    assert rpc.session.initialized
    assert rpc.server.handle(rpc.session, {"jsonrpc": "2.0", "id": 99, "result": {}}, None) is None
