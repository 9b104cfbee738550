"""`relmem bench swan --llm model`: fill requests constrained to their reply schema, per-question errors for LLM
replies out of form, per-question results written as they finish and resumed from. Scripted LLMs stand in for the
model here; test_swan_local_llm.py runs the real one."""
import argparse
import json

import pytest

from conftest import SHARED, requires_shared
import relmem
from relmem.bench import swan as swan_bench
from relmem.hybrid import fill_contract
from relmem.llm import CallableLLM, local

SWAN = SHARED / "data" / "swan"
FILL = {"task": "fill", "database": "formula_1", "table": "circuits", "key_columns": ["name"],
        "answers": [{"name": "country", "type": "TEXT"}, {"name": "lat", "type": "REAL"}],
        "rows": [[1, "Sepang"], [2, "Monza"]]}


def bench(tmp_path, *options, work="work"):
    parser = argparse.ArgumentParser()
    swan_bench.add_arguments(parser)
    return swan_bench.run(parser.parse_args(["--swan", str(SWAN), "--out", str(tmp_path / f"{work}-curated"),
                                             "--work", str(tmp_path / work), *options]))


def test_the_reply_schema_asks_every_item_in_order_with_its_type():
    schema = fill_contract.reply_schema(FILL)
    assert schema["required"] == ["1", "2"] and schema["additionalProperties"] is False
    item = schema["$defs"]["item"]
    assert item["required"] == ["country", "lat"]
    assert {"type": "null"} in item["properties"]["lat"]["anyOf"]
    assert {"type": "number"} in item["properties"]["lat"]["anyOf"]
    listed = fill_contract.reply_schema({"task": "list", "rows": [[1, "x"]],
                                         "answers": [{"name": "power", "type": "TEXT", "list": True,
                                                      "allowed": ["Flight", "Flight", "Agility"]}]})
    assert listed["$defs"]["item"] == {"type": "array", "items": {"enum": ["Flight", "Agility"]}}
    assert fill_contract.reply_budget(FILL) == 16 + 2 * 2 * fill_contract.TOKENS_PER_VALUE


@pytest.mark.skipif(not local.runtime_available(), reason="llama-cpp-python is not installed")
def test_the_reply_schema_becomes_a_grammar_that_refuses_a_missing_item():
    from relmem.gbnf import Grammar
    grammar = Grammar(local._json_schema_text(json.dumps(fill_contract.reply_schema(FILL))))
    assert grammar.matches('{"1": {"country": "Malaysia", "lat": 2.76}, "2": {"country": null, "lat": 45.6}}')
    assert not grammar.matches('{"1": {"country": "Malaysia", "lat": 2.76}}')
    assert not grammar.matches('{"1": {"country": "Malaysia", "lat": "north"}, "2": {"country": null, "lat": 1}}')


def test_only_fill_requests_get_a_schema_and_a_budget():
    seen = []

    def reply(messages, **params):
        seen.append(params)
        return "{}"
    llm = fill_contract.constrained(CallableLLM(reply, name="scripted"))
    assert llm.identity == "scripted+fill-schema"
    body = "Give the values.\n" + fill_contract.OPEN + json.dumps(FILL) + fill_contract.CLOSE
    llm.chat([{"role": "user", "content": body}], stage="hybrid_fill")
    llm.chat("What is 2 + 2?", max_tokens=5)
    assert json.loads(seen[0]["json_schema"]) == fill_contract.reply_schema(FILL)
    assert seen[0]["max_tokens"] == fill_contract.reply_budget(FILL)
    assert "json_schema" not in seen[1] and seen[1]["max_tokens"] == 5


def scripted_model(monkeypatch, answer):
    """--llm model served by `answer(payload, params) -> text`; returns the list of (table, params) asked."""
    asked = []

    def reply(messages, **params):
        payload = fill_contract.request_payload(messages)
        asked.append((payload.get("table"), params))
        return answer(payload, params)
    monkeypatch.setattr(relmem.llm, "from_args", lambda args: CallableLLM(reply, name="scripted-filler"))
    return asked


def nationality(payload, params):
    if payload.get("table") == "circuits":
        return "The circuit lies in a country I cannot name."  # out of form, twice
    return json.dumps({str(row[0]): "British" for row in payload["rows"]})


@requires_shared(SWAN)
def test_a_reply_out_of_form_is_the_questions_error_and_the_run_goes_on(tmp_path, monkeypatch):
    asked = scripted_model(monkeypatch, nationality)
    results = tmp_path / "results.jsonl"
    report = bench(tmp_path, "--mode", "lazy,hqdl", "--hqdl-fill", "touched", "--llm", "model",
                   "--questions", "formula_1/0,formula_1/8", "--results", str(results))
    assert report["llm"] == "scripted-filler"
    assert all(params.get("json_schema") for _, params in asked)
    circuit = report["per_question"]["formula_1/0"]["lazy"]
    assert not circuit["correct"] and "unreadable answer" in circuit["fill_problems"]
    assert "(fills: " in circuit["error"] and not circuit["llm_failed"]
    lazy = report["modes"]["lazy"]
    assert lazy["questions"] == 2 and lazy["questions_with_fill_problems"] == 1
    assert lazy["prompt_tokens"] > 0 and lazy["seconds_per_question"] > 0
    assert "foresight_floor" not in lazy and "factuality" in lazy
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["mode"], r["question_id"]) for r in lines] == [
        ("hqdl", "formula_1/0"), ("hqdl", "formula_1/8"), ("lazy", "formula_1/0"), ("lazy", "formula_1/8")]
    # hqdl (touched) fills every circuit and constructor; lazy only the rows its questions reach
    assert report["modes"]["hqdl"]["rows_filled"] > 10 * lazy["rows_filled"]


@requires_shared(SWAN)
def test_a_failing_llm_is_rerun_on_resume_and_finished_questions_are_not(tmp_path, monkeypatch):
    def flaky(payload, params):
        if payload.get("table") == "circuits":
            raise RuntimeError("the model crashed")
        return json.dumps({str(row[0]): "British" for row in payload["rows"]})
    scripted_model(monkeypatch, flaky)
    first = tmp_path / "first.jsonl"
    report = bench(tmp_path, "--mode", "lazy", "--llm", "model", "--questions", "formula_1/0,formula_1/8",
                   "--results", str(first))
    failed = report["per_question"]["formula_1/0"]["lazy"]
    assert failed["llm_failed"] and "the model crashed" in failed["fill_problems"]
    assert report["per_question"]["formula_1/8"]["lazy"]["ok"]
    assert not report["per_question"]["formula_1/8"]["lazy"].get("llm_failed")

    asked = scripted_model(monkeypatch, nationality)
    again = bench(tmp_path, "--mode", "lazy", "--llm", "model", "--questions", "formula_1/0,formula_1/8",
                  "--results", str(tmp_path / "second.jsonl"), "--resume", str(first), work="work2")
    assert again["reused_from_resume"] == 1
    assert {table for table, _ in asked} == {"circuits"}  # formula_1/8's constructor was not asked again
    assert len((tmp_path / "second.jsonl").read_text().splitlines()) == 2
    with pytest.raises(relmem.Error, match="must be a new file"):
        bench(tmp_path, "--mode", "lazy", "--llm", "model", "--questions", "formula_1/8",
              "--results", str(first), "--resume", str(first), work="work3")


@requires_shared(SWAN)
def test_the_model_run_refuses_what_only_the_oracle_measures(tmp_path, monkeypatch):
    scripted_model(monkeypatch, nationality)
    with pytest.raises(relmem.Error, match="fill-error"):
        bench(tmp_path, "--mode", "lazy", "--llm", "model", "--fill-error", "0.2", "--questions", "formula_1/8")
    with pytest.raises(relmem.Error, match="lazy-alone"):
        bench(tmp_path, "--mode", "lazy-alone", "--llm", "model", "--questions", "formula_1/8", work="w2")
    with pytest.raises(relmem.Error, match="--results"):
        bench(tmp_path, "--mode", "lazy", "--llm", "model", "--questions", "formula_1/8",
              "--results", str(SWAN / "results.jsonl"), work="w4")
    monkeypatch.setattr(relmem.llm, "from_args", lambda args: None)
    with pytest.raises(relmem.Error, match="no LLM is configured"):
        bench(tmp_path, "--mode", "lazy", "--llm", "model", "--questions", "formula_1/8", work="w3")
