"""`relmem serve` over stdio as a subprocess: bad messages, cancellation and sampling leave it serving."""
import json
import subprocess
import sys

import pytest
from mcp_support import LA_QUESTION, build_demo_memory, play_llm, serve

from relmem.bench.mcp import TOOLS


@pytest.fixture(scope="module")
def memory_dir(demo_dir, tmp_path_factory):
    return build_demo_memory(demo_dir, tmp_path_factory.mktemp("memory"))


@pytest.fixture
def client(demo_dir, memory_dir):
    with serve("--dbs", str(demo_dir), "--memory", str(memory_dir), "--timeout", "2") as client:
        yield client


def test_a_session_lists_calls_and_reads(client):
    assert client.initialize()["result"]["protocolVersion"] == "2025-06-18"
    assert len(client.request("tools/list")["result"]["tools"]) == 8
    found = client.call("find_values", {"database": "restaurants", "text": "Los Angeles", "k": 1})["result"]
    assert found["structuredContent"]["matches"][0]["value"] == "LA"
    contents = client.request("resources/read", {"uri": "relmem://restaurants/schema"})["result"]["contents"]
    assert "restaurant" in contents[0]["text"]
    assert client.close() == 0


def test_bad_messages_leave_the_server_answering(client):
    client.initialize()
    client.send_line("{not json")
    assert client.receive()["error"]["code"] == -32700
    client.send_line(b"\xff\xfe")
    assert client.receive()["error"]["code"] == -32700
    client.send_line("[]")
    assert client.receive()["error"]["code"] == -32600
    client.send_line('{"jsonrpc": "1.0", "id": 5, "method": "ping"}')
    assert client.receive() == {"jsonrpc": "2.0", "id": 5, "error": {
        "code": -32600, "message": 'invalid request: expected a JSON object with "jsonrpc": "2.0"'}}
    client.send_line('{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 3}')
    assert client.receive()["error"]["code"] == -32600
    assert client.call("no_such_tool", {})["error"]["code"] == -32602
    wrong = client.call("run_sql", {"database": ["restaurants"], "sql": 1})["result"]
    assert wrong["isError"] and "must be string" in wrong["content"][0]["text"]
    assert client.request("ping")["result"] == {}


def test_a_cancelled_call_is_dropped_and_the_next_is_answered(client):
    client.initialize()
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    client.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                 "params": {"name": "run_sql", "arguments": {"database": "singers", "sql": slow}}})
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}})
    listed = client.request("tools/call", {"name": "list_databases", "arguments": {}})
    assert listed["result"]["structuredContent"]["count"] == 7
    assert client.request("ping", timeout=10)["result"] == {}  # the slow call ended without an answer meanwhile


def test_ask_uses_the_clients_llm_through_sampling(client):
    client.initialize(capabilities={"sampling": {}})
    seen = []

    def sample(request):
        assert request["method"] == "sampling/createMessage"
        seen.append(request["params"])
        return play_llm(request["params"])

    reply = client.call("ask", {"question": LA_QUESTION}, on_request=sample)["result"]
    answer = reply["structuredContent"]
    assert answer["llm"] == "sampling" and "note" not in answer
    [result] = answer["results"]
    assert result["sql"].endswith("city = 'LA'") and result["error"] is None
    assert str(result["rows"][0][0]) in answer["answer"]
    stages = [p["metadata"]["relmem_stage"] for p in seen]
    assert "plan" in stages and all(p["maxTokens"] > 0 for p in seen)
    assert all(m["content"]["type"] == "text" for p in seen for m in p["messages"])


def test_a_sampling_error_ends_the_question_not_the_server(client):
    client.initialize(capabilities={"sampling": {}})
    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "ask", "arguments": {"question": LA_QUESTION}}})
    request = client.receive()
    client.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user declined"}})
    while True:
        reply = client.receive()
        if reply.get("id") == 1:
            break
        client.send({"jsonrpc": "2.0", "id": reply["id"], "error": {"code": -1, "message": "user declined"}})
    answer = reply["result"]["structuredContent"]
    assert answer["answer"].startswith("could not answer") and "user declined" in json.dumps(answer["trace"])
    assert client.request("ping")["result"] == {}


def test_ask_without_sampling_says_no_llm_is_available(client):
    client.initialize()
    answer = client.call("ask", {"question": LA_QUESTION})["result"]["structuredContent"]
    assert answer["llm"] == "none" and "No LLM is available" in answer["note"]


def test_bench_mcp_times_every_tool_over_stdio(demo_dir, memory_dir):
    done = subprocess.run([sys.executable, "-m", "relmem.cli", "bench", "mcp", "--dbs", str(demo_dir), "--memory",
                           str(memory_dir), "--calls", "3", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["databases"] == 7 and set(report["tools"]) == set(TOOLS)
    assert all(t["calls"] >= 1 and t["errors"] == 0 and t["median_ms"] > 0 for t in report["tools"].values())
