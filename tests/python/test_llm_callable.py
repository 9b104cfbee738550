"""Python callables as LLMs, the response cache, token accounting and configuration."""
import argparse
import sqlite3

import pytest
from fake_llm_server import FakeLLMServer, Rule

import relmem
from relmem import llm as rllm


def recorder(reply="ok"):
    calls = []

    def fn(messages, **params):
        calls.append({"messages": messages, **params})
        return reply(messages, **params) if callable(reply) else reply
    return fn, calls


def test_callable_receives_messages_and_stage():
    fn, calls = recorder("Answer: (NO)")
    response = rllm.CallableLLM(fn).chat([("system", "s"), {"role": "user", "content": "q"}], stage="context_switch")
    assert response.text == "Answer: (NO)"
    assert calls == [{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}],
                      "stage": "context_switch"}]


def test_callable_receives_the_parameters_that_are_set():
    fn, calls = recorder()
    rllm.CallableLLM(fn).chat("q", stage="plan", temperature=0.3, max_tokens=50, stop="End SQL")
    assert calls[0]["temperature"] == 0.3 and calls[0]["max_tokens"] == 50 and calls[0]["stop"] == ["End SQL"]
    rllm.CallableLLM(fn).chat("q")
    assert set(calls[1]) == {"messages", "stage"} and calls[1]["stage"] == ""


def test_str_reply_gets_estimated_usage():
    fn, _ = recorder("x" * 10)
    usage = rllm.CallableLLM(fn).chat([{"role": "user", "content": "y" * 9}]).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.estimated) == (3, 3, True)


@pytest.mark.parametrize("usage", [{"prompt_tokens": 7, "completion_tokens": 2}, (7, 2), rllm.Usage(7, 2)])
def test_text_and_usage_reply(usage):
    fn, _ = recorder(lambda messages, **params: ("hello", usage))
    response = rllm.CallableLLM(fn).chat("q")
    assert response.text == "hello"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.estimated) == (7, 2, False)


def test_response_reply():
    fn, _ = recorder(lambda messages, **params: rllm.Response("cut", rllm.Usage(5, 1), finish_reason="length"))
    response = rllm.CallableLLM(fn).chat("q")
    assert (response.text, response.finish_reason, response.usage.prompt_tokens) == ("cut", "length", 5)


@pytest.mark.parametrize("reply, message", [
    (42, "returned int; expected str"),
    (("text", {"prompt_tokens": 1}), "needs 'prompt_tokens' and 'completion_tokens'"),
    (("text", "lots"), "usage must be"),
    ((1, 2), "the returned text must be a str"),
])
def test_wrong_replies_are_clear_errors(reply, message):
    fn, _ = recorder(lambda messages, **params: reply)
    with pytest.raises(relmem.Error, match=message):
        rllm.CallableLLM(fn, name="bad").chat("q")


def test_callable_exceptions_become_relmem_errors():
    def fn(messages, **params):
        raise ValueError("no quota left")
    with pytest.raises(relmem.Error, match="LLM callable 'mine' raised ValueError: no quota left"):
        rllm.CallableLLM(fn, name="mine").chat("q", stage="plan")


def test_keyboard_interrupt_passes_through():
    def fn(messages, **params):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        rllm.CallableLLM(fn).chat("q")


def test_callable_without_kwargs_support_is_a_clear_error():
    with pytest.raises(relmem.Error, match="TypeError"):
        rllm.CallableLLM(lambda messages: "x").chat("q", stage="plan")


def test_default_name_identifies_the_function():
    def my_llm(messages, **params):
        return "x"
    assert rllm.CallableLLM(my_llm).identity.endswith("my_llm")
    assert rllm.CallableLLM(my_llm, name="v2").identity == "v2"


def test_cache_hits_on_rerun_and_across_instances(tmp_path):
    fn, calls = recorder(lambda messages, **params: "answer to " + messages[-1]["content"])
    path = tmp_path / "sub" / "cache.sqlite"
    cached = rllm.CachedLLM(rllm.CallableLLM(fn, name="f"), str(path))
    first = cached.chat("q1", stage="plan")
    again = cached.chat("q1", stage="plan")
    cached.chat("q1", stage="refine")
    assert (first.cached, again.cached) == (False, True)
    assert again.text == first.text and again.usage == first.usage
    assert (cached.hits, cached.misses, cached.size()) == (1, 2, 2)
    assert len(calls) == 2
    rerun = rllm.CachedLLM(fn, str(path))  # a plain function is wrapped; its default name differs from "f"
    rerun_named = rllm.CachedLLM(rllm.CallableLLM(fn, name="f"), str(path))
    assert rerun_named.chat("q1", stage="refine").cached
    assert not rerun.chat("q1", stage="refine").cached
    assert len(calls) == 3


def test_cache_over_http_makes_reruns_free(tmp_path):
    with FakeLLMServer([Rule(reply="(YES)", usage=(20, 2))]) as server:
        path = str(tmp_path / "cache.sqlite")
        for _ in range(2):
            llm = rllm.CachedLLM(rllm.OpenAIChat(server.base_url, "m", backoff=0.01), path)
            for question in ("a", "b", "c"):
                llm.chat(question, stage="context_switch")
    assert len(server.requests) == 3
    assert (llm.hits, llm.misses) == (3, 0)
    assert llm.chat("a", stage="context_switch").usage.prompt_tokens == 20


def test_cache_refuses_a_user_database(tmp_path):
    path = tmp_path / "user.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE singer(name TEXT)")
    with pytest.raises(relmem.Error, match="not a relmem response cache"):
        rllm.CachedLLM(lambda messages, **params: "x", str(path))
    with sqlite3.connect(path) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["singer"]


def test_cache_does_not_store_failures(tmp_path):
    attempts = []

    def flaky(messages, **params):
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("down")
        return "up"
    cached = rllm.CachedLLM(flaky, str(tmp_path / "c.sqlite"))
    with pytest.raises(relmem.Error, match="ConnectionError"):
        cached.chat("q")
    assert cached.chat("q").text == "up" and cached.chat("q").cached
    assert cached.size() == 1


def test_metered_llm_counts_tokens_per_stage():
    fn, _ = recorder(lambda messages, **params: ("x", (10, 2) if params["stage"] == "plan" else (3, 1)))
    ledger = rllm.TokenLedger()
    llm = rllm.MeteredLLM(fn, ledger)
    llm.chat("q", stage="plan")
    llm.chat("q", stage="plan")
    llm.chat("q", stage="context_switch")
    stages = ledger.by_stage()
    assert (stages["plan"].prompt_tokens, stages["plan"].completion_tokens, stages["plan"].calls) == (20, 4, 2)
    assert stages["context_switch"].total_tokens == 4
    assert ledger.to_dict()["total"] == {"prompt_tokens": 23, "completion_tokens": 5, "total_tokens": 28,
                                         "calls": 3, "cached_calls": 0, "estimated_calls": 0}


def test_ledger_per_question_and_per_run(tmp_path):
    question, run = rllm.TokenLedger(), rllm.TokenLedger()
    llm = rllm.MeteredLLM(rllm.CachedLLM(lambda messages, **params: "abcd", str(tmp_path / "c.sqlite")), question)
    for _ in range(2):  # the second question is answered from the cache
        llm.chat("same question", stage="rephrase")
        run.merge(question)
        question.reset()
    assert question.total().calls == 0
    totals = run.to_dict()["stages"]["rephrase"]
    assert totals["calls"] == 2 and totals["cached_calls"] == 1 and totals["estimated_calls"] == 2
    assert totals["completion_tokens"] == 2


def test_metered_llm_has_its_own_ledger_by_default():
    llm = rllm.MeteredLLM(lambda messages, **params: "x")
    llm.chat("q", stage="plan")
    assert llm.ledger.total().calls == 1


def test_as_llm():
    base = rllm.CallableLLM(lambda messages, **params: "x")
    assert rllm.as_llm(base) is base
    assert isinstance(rllm.as_llm(lambda messages, **params: "y"), rllm.CallableLLM)
    with pytest.raises(relmem.Error, match="expected a relmem.llm.LLM or a callable"):
        rllm.as_llm(42)


def test_stages_constant():
    assert rllm.STAGES == ("context_switch", "plan", "correct_values", "refine", "self_correct", "return_type",
                           "generate_output", "rephrase", "hybrid_propose", "hybrid_fill", "hybrid_map", "hybrid_qa",
                           "hybrid_match")


def test_from_config_nothing_configured(monkeypatch):
    monkeypatch.delenv("RELMEM_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("RELMEM_LLM_MODEL", raising=False)
    assert rllm.from_config() is None


def test_from_config_falls_back_to_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RELMEM_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("RELMEM_LLM_MODEL", "env-model")
    llm = rllm.from_config()
    assert isinstance(llm, rllm.OpenAIChat) and llm.model == "env-model"
    assert llm.url == "http://127.0.0.1:9/v1/chat/completions"
    assert rllm.from_config(model="flag-model").model == "flag-model"
    cached = rllm.from_config(cache=tmp_path / "c.sqlite")
    assert isinstance(cached, rllm.CachedLLM) and isinstance(cached.inner, rllm.OpenAIChat)


def test_from_config_half_configured_is_an_error(monkeypatch):
    monkeypatch.delenv("RELMEM_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("RELMEM_LLM_MODEL", raising=False)
    with pytest.raises(relmem.Error, match="no model"):
        rllm.from_config(base_url="http://localhost:11434/v1")
    with pytest.raises(relmem.Error, match="no base URL"):
        rllm.from_config(model="llama3")


def test_argparse_flags_reach_the_server(monkeypatch, tmp_path):
    monkeypatch.setenv("MY_KEY", "secret")
    with FakeLLMServer([Rule(reply="ok")]) as server:
        parser = argparse.ArgumentParser()
        rllm.add_llm_arguments(parser)
        args = parser.parse_args(["--llm-base-url", server.base_url, "--llm-model", "flag-model",
                                  "--llm-api-key-env", "MY_KEY", "--llm-cache", str(tmp_path / "c.sqlite"),
                                  "--llm-max-retries", "0"])
        llm = rllm.from_args(args)
        llm.chat("hi", stage="plan")
        llm.chat("hi", stage="plan")
    assert len(server.requests) == 1
    assert server.requests[0].body["model"] == "flag-model"
    assert server.requests[0].headers["authorization"] == "Bearer secret"
