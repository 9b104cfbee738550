"""OpenAIChat against the loopback fake server: stage header, retries, backoff, Retry-After, clear failures."""
import threading
import time

import pytest
from conftest import requires_http
from fake_llm_server import FakeLLMServer, Rule

import relmem
from relmem import llm as rllm

pytestmark = requires_http

MESSAGES = [{"role": "system", "content": "You decide."}, {"role": "user", "content": "How many singers are there?"}]


def client(server, **options):
    options.setdefault("backoff", 0.01)
    options.setdefault("timeout", 5.0)
    return rllm.OpenAIChat(server.base_url, "fake-model", **options)


def test_reply_usage_and_request_body():
    with FakeLLMServer([Rule(reply="Answer: (YES)", usage=(31, 4))]) as server:
        response = client(server).chat(MESSAGES, stage="context_switch", max_tokens=16, stop=["\n\n"])
    assert response.text == "Answer: (YES)"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (31, 4)
    assert not response.usage.estimated and not response.cached and response.finish_reason == "stop"
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "fake-model"
    assert request.body["messages"] == MESSAGES
    assert request.body["temperature"] == 0.0  # the reproducible default
    assert request.body["max_tokens"] == 16 and request.body["stop"] == ["\n\n"]


@pytest.mark.parametrize("stage", ["context_switch", "answer_directly", "a stage of my own"])
def test_every_request_carries_its_stage_header(stage):
    with FakeLLMServer([Rule(stage=stage, reply=f"for {stage}")]) as server:
        assert client(server).chat(MESSAGES, stage=stage).text == f"for {stage}"
    assert server.stages() == [stage]


def test_rules_answer_by_stage_and_prompt_content():
    rules = [Rule(stage="plan", contains="singer", reply="singer plan"), Rule(stage="plan", reply="other plan"),
             Rule(reply=lambda request: "echo " + request.messages[-1]["content"])]
    with FakeLLMServer(rules) as server:
        llm = client(server)
        assert llm.chat(MESSAGES, stage="plan").text == "singer plan"
        assert llm.chat("How many flights?", stage="plan").text == "other plan"
        assert llm.chat("ping", stage="rephrase").text == "echo ping"
    assert server.stages() == ["plan", "plan", "rephrase"]


def test_no_stage_no_header():
    with FakeLLMServer([Rule(reply="ok")]) as server:
        client(server).chat("hi")
    assert "x-relmem-stage" not in server.requests[0].headers


def test_api_key_from_the_named_environment_variable(monkeypatch):
    monkeypatch.setenv("RELMEM_TEST_KEY", "sk-test-123")
    with FakeLLMServer([Rule(reply="ok")]) as server:
        client(server, api_key_env="RELMEM_TEST_KEY").chat("hi")
        client(server, api_key_env="RELMEM_TEST_KEY_UNSET").chat("hi")
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-123"
    assert "authorization" not in server.requests[1].headers


def test_rate_limit_honours_retry_after():
    rules = [Rule(fault="rate_limit", retry_after=0.4, times=2), Rule(reply="finally")]
    with FakeLLMServer(rules) as server:
        start = time.monotonic()
        response = client(server, backoff=0.01, max_retries=3).chat(MESSAGES, stage="plan")
    assert response.text == "finally"
    assert len(server.requests) == 3
    gaps = [b.time - a.time for a, b in zip(server.requests, server.requests[1:])]
    assert all(gap >= 0.38 for gap in gaps), gaps  # waited Retry-After, not the 0.01 s backoff
    assert time.monotonic() - start >= 0.78


def test_server_errors_back_off_exponentially():
    rules = [Rule(fault="server_error", status=503, times=3), Rule(reply="recovered")]
    with FakeLLMServer(rules) as server:
        response = client(server, backoff=0.1, max_retries=3).chat(MESSAGES, stage="refine")
    assert response.text == "recovered"
    gaps = [b.time - a.time for a, b in zip(server.requests, server.requests[1:])]
    assert len(gaps) == 3
    assert gaps[0] >= 0.09 and gaps[1] >= 0.19 and gaps[2] >= 0.39, gaps  # 0.1, 0.2, 0.4 s


def test_timeout_is_retried():
    rules = [Rule(fault="timeout", delay=3.0, times=1), Rule(reply="fast now")]
    with FakeLLMServer(rules) as server:
        response = client(server, timeout=0.3, max_retries=2).chat(MESSAGES, stage="plan")
    assert response.text == "fast now"
    assert len(server.requests) == 2


def test_truncated_transfer_is_retried():
    rules = [Rule(fault="truncated", reply="x" * 200, times=1), Rule(reply="whole")]
    with FakeLLMServer(rules) as server:
        assert client(server).chat(MESSAGES, stage="plan").text == "whole"
    assert len(server.requests) == 2


def test_exhausted_retries_raise_a_clear_error():
    with FakeLLMServer([Rule(fault="server_error", status=502)]) as server:
        with pytest.raises(relmem.Error) as error:
            client(server, max_retries=2).chat(MESSAGES, stage="self_correct")
    message = str(error.value)
    assert "after 3 attempts" in message
    assert "HTTP 502" in message and "internal error" in message  # status and body snippet
    assert server.base_url + "/chat/completions" in message
    assert "model fake-model" in message and "stage self_correct" in message
    assert len(server.requests) == 3


def test_timeouts_exhausted():
    with FakeLLMServer([Rule(fault="timeout", delay=3.0)]) as server:
        with pytest.raises(relmem.Error, match=r"after 2 attempts: Timeout was reached"):
            client(server, timeout=0.2, max_retries=1).chat(MESSAGES, stage="plan")


@pytest.mark.parametrize("fault, expected", [
    ("malformed_json", "not valid JSON (HTTP 200)"),
    ("missing_choices", "no choices (HTTP 200)"),
    ("bad_request", "HTTP 400"),
])
def test_malformed_and_client_errors_fail_at_once(fault, expected):
    with FakeLLMServer([Rule(fault=fault)]) as server:
        with pytest.raises(relmem.Error) as error:
            client(server, max_retries=3).chat(MESSAGES, stage="plan")
    assert expected in str(error.value)
    assert len(server.requests) == 1


def test_malformed_json_error_quotes_the_body():
    with FakeLLMServer([Rule(fault="malformed_json")]) as server:
        with pytest.raises(relmem.Error, match='half an ans'):
            client(server).chat(MESSAGES)


def test_output_cut_at_max_tokens_is_flagged():
    with FakeLLMServer([Rule(fault="length", reply="Goal: count singers\nBegin SQL\nSELECT")]) as server:
        response = client(server).chat(MESSAGES, stage="plan", max_tokens=5)
    assert response.finish_reason == "length"
    assert response.text == "Goal: count singers\nBegin SQL\nSELECT"[:18]


def test_missing_usage_is_estimated():
    with FakeLLMServer([Rule(reply="12345678", omit_usage=True)]) as server:
        response = client(server).chat(MESSAGES)
    assert response.usage.estimated
    assert response.usage.completion_tokens == 2
    assert response.usage.prompt_tokens == sum(rllm.estimate_tokens(m["content"]) for m in MESSAGES)


def test_unreachable_server_is_an_error_not_a_crash():
    with FakeLLMServer([]) as server:
        url = server.base_url
    with pytest.raises(relmem.Error, match="after 2 attempts"):
        rllm.OpenAIChat(url, "m", max_retries=1, backoff=0.01, timeout=2.0).chat("hi")


def test_concurrent_requests_from_python_threads():
    with FakeLLMServer([Rule(reply=lambda request: request.messages[-1]["content"].upper(), delay=0.2)]) as server:
        llm = client(server)
        results = {}

        def ask(i):
            results[i] = llm.chat(f"question {i}", stage="rephrase").text
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {i: f"QUESTION {i}" for i in range(6)}
    assert len(server.requests) == 6


def test_invalid_requests_are_refused_before_sending():
    with FakeLLMServer([Rule(reply="ok")]) as server:
        llm = client(server)
        with pytest.raises(relmem.Error, match="stage name must be printable ASCII"):
            llm.chat("hi", stage="plan\r\nX-Injected: 1")  # a header of its own, were it sent
        with pytest.raises(relmem.Error, match="role"):
            llm.chat([{"role": "tool", "content": "x"}])
        with pytest.raises(relmem.Error, match="no messages"):
            llm.chat([])
        with pytest.raises(relmem.Error, match="needs 'role' and 'content'"):
            llm.chat([{"content": "x"}])
    assert server.requests == []


def test_bad_configuration():
    with pytest.raises(relmem.Error, match="http"):
        rllm.OpenAIChat("localhost:8000/v1", "m")
    with pytest.raises(relmem.Error, match="model"):
        rllm.OpenAIChat("http://localhost:8000/v1", "")
