"""A loopback OpenAI-compatible chat completions server for tests, with fault injection.

    rules = [Rule(fault="rate_limit", retry_after=0.2, times=1),        # first request: 429, Retry-After 0.2 s
             Rule(stage="context_switch", reply="Answer: (YES)"),
             Rule(stage="plan", contains="singer", reply=PLAN_TEXT),
             Rule(reply=lambda request: "echo " + request.messages[-1]["content"])]
    with FakeLLMServer(rules) as server:
        llm = relmem.llm.OpenAIChat(server.base_url, "fake-model", backoff=0.01)
        ...
        assert server.requests[0].stage == "context_switch"

Rules are relmem.llm.ScriptRule's (the scripted LLM's, matched the same way: stage from the header X-Relmem-Stage,
prompt content, `times`) plus a fault. A request no rule matches gets HTTP 400 (not retried, so a missing rule fails a
test fast). Faults:
    timeout          wait `delay` seconds (default 5) before answering: longer than the client's timeout
    rate_limit       HTTP 429, with a Retry-After header when `retry_after` is set
    server_error     HTTP `status` (default 500), Retry-After when `retry_after` is set
    malformed_json   HTTP 200 with a body that is not JSON
    missing_choices  HTTP 200 with a JSON body without choices
    truncated        HTTP 200 announcing the full body but sending half of it, then closing the connection
    length           the reply cut in half, finish_reason "length" (output truncated at max_tokens)
    bad_request      HTTP 400
The server binds 127.0.0.1 on an ephemeral port, serves each request in its own thread, records every request, and
stops by itself after `lifetime` seconds or `max_requests` requests, whichever comes first.
"""
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional, Union

from relmem.llm import ScriptRule
from relmem.scripted_llm import first_match

import pytest

import relmem.llm

NO_HTTP = "relmem was built without HTTP (RELMEM_WITH_HTTP=OFF)"
FAULTS = ("timeout", "rate_limit", "server_error", "malformed_json", "missing_choices", "truncated", "length",
          "bad_request")


@dataclass
class RecordedRequest:
    path: str
    headers: dict  # lowercase names
    body: Optional[dict]  # None when the body was not JSON
    time: float

    @property
    def stage(self):
        return self.headers.get("x-relmem-stage")

    @property
    def messages(self):
        return (self.body or {}).get("messages", [])

    @property
    def prompt(self):
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@dataclass
class Rule(ScriptRule):
    fault: Optional[str] = None
    retry_after: Optional[Union[float, str]] = None
    status: int = 500
    delay: float = 0.0
    usage: Optional[tuple] = None  # (prompt_tokens, completion_tokens); default: word counts
    omit_usage: bool = False

    def __post_init__(self):
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}; known: {', '.join(FAULTS)}")


class FakeLLMServer:
    """See the module docstring. `base_url` ends in /v1; `requests` lists RecordedRequest in arrival order."""

    def __init__(self, rules, lifetime=30.0, max_requests=500):
        if not relmem.llm.built_with_http():
            pytest.skip(NO_HTTP)  # every test that talks to the server
        self.rules = list(rules)
        self.lifetime = lifetime
        self.max_requests = max_requests
        self.requests = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = None
        self._timer = None

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stages(self):
        return [r.stage for r in self.requests]

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self):
        with self._lock:
            if self._stopping.is_set():
                return
            self._stopping.set()  # wakes handlers sleeping in a timeout fault
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _record(self, request):
        with self._lock:
            self.requests.append(request)
            count = len(self.requests)
            rule = first_match(self.rules, request)
        if count >= self.max_requests:
            threading.Thread(target=self.stop, daemon=True).start()
        return rule

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                          time.monotonic())
                rule = server._record(request)
                try:
                    self._answer(request, rule)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to do

            def _answer(self, request, rule):
                if not request.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {request.path}"}})
                if rule is None:
                    return self._send(400, {"error": {"message": f"fake server: no rule matched stage "
                                                                 f"{request.stage!r}"}})
                fault = rule.fault
                delay = rule.delay or (5.0 if fault == "timeout" else 0.0)
                if delay and server._stopping.wait(delay):
                    return
                headers = {"Retry-After": str(rule.retry_after)} if rule.retry_after is not None else {}
                if fault == "rate_limit":
                    return self._send(429, {"error": {"message": "rate limit reached"}}, headers)
                if fault == "server_error":
                    return self._send(rule.status, {"error": {"message": "internal error"}}, headers)
                if fault == "bad_request":
                    return self._send(400, {"error": {"message": "bad request"}})
                if fault == "malformed_json":
                    return self._send_raw(200, b'{"choices": [{"message": {"content": "half an ans')
                if fault == "missing_choices":
                    return self._send(200, {"object": "chat.completion", "choices": []})
                text = rule.text(request)
                finish_reason = "stop"
                if fault == "length":
                    text, finish_reason = text[:len(text) // 2], "length"
                payload = {"id": "chatcmpl-fake", "object": "chat.completion",
                           "model": (request.body or {}).get("model"),
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": finish_reason}]}
                if not rule.omit_usage:
                    prompt_tokens, completion_tokens = rule.usage or (len(request.prompt.split()), len(text.split()))
                    payload["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                        "total_tokens": prompt_tokens + completion_tokens}
                if fault == "truncated":
                    data = json.dumps(payload).encode()
                    return self._send_raw(200, data, declared_length=len(data), cut=len(data) // 2)
                return self._send(200, payload)

            def _send(self, status, payload, headers=None):
                self._send_raw(status, json.dumps(payload).encode(), headers=headers)

            def _send_raw(self, status, data, headers=None, declared_length=None, cut=None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(declared_length if declared_length is not None else len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data if cut is None else data[:cut])
                self.wfile.flush()
                if cut is not None:
                    self.close_connection = True

        return Handler
