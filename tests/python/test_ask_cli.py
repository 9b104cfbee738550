"""`relmem index` and `relmem ask` as a user runs them: subprocesses against the demo databases and the fake server."""
import json
import os
import subprocess
import sys

import pytest
from fake_llm_server import FakeLLMServer, Rule

QUESTION = "What is the average rating of Italian restaurants in Los Angeles?"
FIXED = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"
RULES = [
    Rule(stage="context_switch", reply="Answer: (YES)"),
    Rule(stage="plan", contains=QUESTION,
         reply="Goal: average rating\nBegin SQL\nSELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' "
               "AND city = 'Los Angeles'\nEnd SQL\nDatabase: restaurants"),
    Rule(stage="correct_values", contains="'LA'", reply=f"Begin SQL\n{FIXED}\nEnd SQL"),
    Rule(stage="return_type", reply="(TEXT)"),
    Rule(stage="generate_output", reply=lambda r: "Answer: the average rating is "
         + r.messages[-1]["content"].strip().splitlines()[-1]),
]


def relmem_cli(*args, env=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RELMEM_LLM_")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "relmem.cli", *args], capture_output=True, text=True, timeout=120,
                          env=environment)


@pytest.fixture(scope="module")
def memory_dir(demo_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("memory")
    examples = out.parent / "examples.json"
    examples.write_text(json.dumps([{"question": "How many Mexican restaurants are in Seattle?",
                                     "sql": "SELECT COUNT(*) FROM restaurant WHERE food_type = 'Mexican' AND "
                                            "city = 'SEA'", "database": "restaurants"},
                                    {"term": "LA", "definition": "Los Angeles"}]))
    done = relmem_cli("index", "--dbs", str(demo_dir), "--out", str(out), "--encoder", "hashing",
                      "--examples", str(examples))
    assert done.returncode == 0, done.stderr
    assert "saved memories of 7 databases" in done.stdout and "2 examples" in done.stdout
    assert "value memory" in done.stderr  # progress bars
    return out


def expected_average(demo_dir):
    import sqlite3
    with sqlite3.connect(demo_dir / "restaurants" / "restaurants.sqlite") as db:
        return db.execute(FIXED).fetchone()[0]


def test_index_saves_every_memory(memory_dir):
    manifest = json.loads((memory_dir / "manifest.json").read_text())
    assert manifest["encoder"] == "hashing:512" and len(manifest["databases"]) == 7
    assert all((memory_dir / part).is_dir() for part in ("selection", "values", "examples"))


def test_ask_json_with_llm_flags(demo_dir, memory_dir):
    with FakeLLMServer(RULES) as server:
        out = relmem_cli("ask", "--dbs", str(demo_dir), "--memory", str(memory_dir), "--json",
                         "--llm-base-url", server.base_url, "--llm-model", "fake-model",
                         "--llm-api-key-env", "FAKE_KEY", QUESTION, env={"FAKE_KEY": "secret-key"})
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"answer", "results", "trace"}
    average = expected_average(demo_dir)
    assert report["answer"] == f"the average rating is {average}"
    assert report["results"] == [{"database": "restaurants", "sql": FIXED, "columns": ["AVG(rating)"],
                                  "rows": [[average]], "error": None}]
    assert [r["stage"] for r in report["trace"]][:3] == ["context_switch", "select_databases", "retrieve_examples"]
    assert all("stage" in r and "seconds" in r and "decision" in r for r in report["trace"])
    assert server.requests[0].headers["authorization"] == "Bearer secret-key"
    assert server.stages() == ["context_switch", "plan", "correct_values", "return_type", "generate_output"]


def test_ask_with_llm_decomposition(demo_dir, memory_dir):
    rules = [Rule(stage="decompose", reply=f"Parts:\n1. {QUESTION}")] + RULES
    with FakeLLMServer(rules) as server:
        out = relmem_cli("ask", "--dbs", str(demo_dir), "--memory", str(memory_dir), "--json", "--decompose", "llm",
                         "--llm-base-url", server.base_url, "--llm-model", "fake-model", QUESTION)
    assert out.returncode == 0, out.stderr
    trace = json.loads(out.stdout)["trace"]
    assert [r["stage"] for r in trace][:3] == ["context_switch", "decompose", "select_databases"]
    assert trace[1]["decision"] == {"parts": [QUESTION]} and server.stages()[:2] == ["context_switch", "decompose"]
    assert json.loads(out.stdout)["answer"] == f"the average rating is {expected_average(demo_dir)}"


def test_ask_reads_the_llm_from_the_environment_and_builds_memory_itself(demo_dir):
    with FakeLLMServer(RULES) as server:
        out = relmem_cli("ask", "--dbs", str(demo_dir), "--encoder", "hashing", "--verbose", QUESTION,
                         env={"RELMEM_LLM_BASE_URL": server.base_url, "RELMEM_LLM_MODEL": "fake-model"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"the average rating is {expected_average(demo_dir)}"
    assert f"[restaurants] {FIXED}" in out.stdout
    assert "- correct_values [1: restaurants]" in out.stdout and "LLM call(s)" in out.stdout


def test_ask_without_llm_runs_the_llm_free_stages(demo_dir, memory_dir):
    out = relmem_cli("ask", "--dbs", str(demo_dir), "--memory", str(memory_dir), QUESTION)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("No LLM is configured")
    assert "Most relevant databases: restaurants" in out.stdout
    assert "'Los Angeles' -> restaurant.city = 'LA'" in out.stdout
    out = relmem_cli("ask", "--dbs", str(demo_dir), "--memory", str(memory_dir), "--json", QUESTION)
    report = json.loads(out.stdout)
    assert report["results"] == [] and report["answer"].startswith("No LLM is configured")
    assert [r["stage"] for r in report["trace"]] == ["select_databases", "link_question_values", "no_llm"]


def test_ask_reports_failures_clearly(demo_dir, tmp_path):
    out = relmem_cli("ask", "--dbs", str(demo_dir), "--memory", str(tmp_path / "none"), QUESTION)
    assert out.returncode == 2 and "relmem index" in out.stderr and "Traceback" not in out.stderr
    with FakeLLMServer([Rule(fault="server_error")]) as server:
        out = relmem_cli("ask", "--dbs", str(demo_dir), "--encoder", "hashing", "--json", "--llm-max-retries", "0",
                         "--llm-base-url", server.base_url, "--llm-model", "m", QUESTION)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    report = json.loads(out.stdout)
    assert report["answer"].startswith("could not answer: no usable plan")
    assert any("500" in (r["error"] or "") for r in report["trace"])
