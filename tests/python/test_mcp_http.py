"""Streamable HTTP: sessions, headers, refusals, sampling on an event stream, clients that disconnect."""
import http.client
import json
import socket
import threading

import pytest
from mcp_support import LA_QUESTION, build_demo_memory, play_llm

from relmem.mcp import HttpServer, McpServer, Toolbox

ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def server(demo_dir, tmp_path_factory):
    memory = build_demo_memory(demo_dir, tmp_path_factory.mktemp("memory"))
    with Toolbox.open(str(demo_dir), memory=str(memory), timeout=2.0) as toolbox, \
            HttpServer(McpServer(toolbox)) as http_server:
        thread = threading.Thread(target=http_server.serve_forever, daemon=True)
        thread.start()
        yield http_server
        http_server.shutdown()


def post(server, message, session=None, headers=None, raw=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    sent = {"Content-Type": "application/json", "Accept": ACCEPT, **(headers or {})}
    if session:
        sent["Mcp-Session-Id"] = session
    connection.request("POST", "/mcp", body=raw if raw is not None else json.dumps(message), headers=sent)
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response, body


def initialize(server, capabilities=None):
    response, body = post(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities or {}, "clientInfo": {"name": "t"}}})
    assert response.status == 200 and json.loads(body)["result"]["protocolVersion"] == "2025-06-18"
    session = response.getheader("Mcp-Session-Id")
    assert session and len(session) >= 32
    response, body = post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert (response.status, body) == (202, "")
    return session


def test_a_session_from_initialize_to_delete(server):
    session = initialize(server)
    response, body = post(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_sql", "arguments": {"database": "singers", "sql": "SELECT count(*) FROM singer"}}}, session,
        {"MCP-Protocol-Version": "2025-06-18"})
    assert response.status == 200 and response.getheader("Content-Type") == "application/json"
    assert json.loads(body)["result"]["structuredContent"]["rows"][0][0] > 0
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session})
    assert connection.getresponse().status == 200
    assert post(server, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, session)[0].status == 404


@pytest.mark.parametrize("headers, session, status", [
    ({}, None, 400),                                            # no session id
    ({}, "0" * 32, 404),                                        # unknown session
    ({"Origin": "https://evil.example"}, "", 403),              # DNS rebinding
    ({"Host": "evil.example:80"}, "", 403),
    ({"MCP-Protocol-Version": "1999-01-01"}, "", 400),
])
def test_requests_the_server_refuses(server, headers, session, status):
    if session == "":
        session = initialize(server)
    response, body = post(server, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, session, headers)
    assert response.status == status and "error" in json.loads(body)


def test_malformed_bodies_and_other_methods(server):
    session = initialize(server)
    response, body = post(server, None, session, raw="{oops")
    assert response.status == 400 and json.loads(body)["error"]["code"] == -32700
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", "/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": session})
    response = connection.getresponse()
    response.read()
    assert response.status == 405 and "POST" in response.getheader("Allow")
    connection.request("POST", "/elsewhere", body="{}", headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status == 404
    assert json.loads(post(server, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, session)[1])["result"] == {}


def test_sampling_goes_out_on_the_calls_event_stream(server):
    session = initialize(server, {"sampling": {}})
    answers = []

    def answer_sampling(connection):  # reads the stream; POSTs each sampling answer as its own request
        response = connection.getresponse()
        assert response.getheader("Content-Type") == "text/event-stream"
        while True:
            line = response.readline().decode()
            if not line:
                return
            if line.startswith("data: "):
                message = json.loads(line[len("data: "):])
                if "method" in message:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": play_llm(message["params"])}
                    assert post(server, reply, session)[0].status == 202
                else:
                    answers.append(message)

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "ask", "arguments": {"question": LA_QUESTION}}}), headers={
        "Content-Type": "application/json", "Accept": ACCEPT, "Mcp-Session-Id": session})
    answer_sampling(connection)
    [final] = answers
    assert final["id"] == 7
    result = final["result"]["structuredContent"]
    assert result["llm"] == "sampling" and result["results"][0]["sql"].endswith("city = 'LA'")


def test_a_client_that_disconnects_mid_call_costs_only_its_call(server):
    session = initialize(server)
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "run_sql", "arguments": {"database": "singers", "sql": slow}}}).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: " +
                    ACCEPT.encode() + b"\r\nMcp-Session-Id: " + session.encode() +
                    f"\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    response, body = post(server, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "list_databases", "arguments": {}}}, session)
    assert response.status == 200 and json.loads(body)["result"]["structuredContent"]["count"] == 7
