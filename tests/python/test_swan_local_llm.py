"""`relmem bench swan` with the real local model: one SWAN question filled lazily under its reply schema, and the
same question through BlendSQL where scripts/install_blendsql.sh installed it. Skipped where llama-cpp-python,
the model or SWAN is absent."""
import argparse
import json
import os

import pytest
from conftest import SHARED, USER_GGUF

from relmem.bench import swan as swan_bench
from relmem.bench import swan_blendsql
from relmem.llm import local

SWAN = SHARED / "data" / "swan"
GGUF = USER_GGUF or local.default_gguf()
BLENDSQL_PYTHON = swan_blendsql.python_path()  # the user's install, read before the tests isolate RELMEM_HOME
pytestmark = [
    pytest.mark.skipif(not (local.runtime_available() and GGUF and os.path.isfile(GGUF)),
                       reason="no local LLM installed (make setup installs llama-cpp-python and the model)"),
    pytest.mark.skipif(not SWAN.exists(), reason=f"{SWAN} is absent")]


def bench(tmp_path, *options):
    parser = argparse.ArgumentParser()
    swan_bench.add_arguments(parser)
    return swan_bench.run(parser.parse_args(["--swan", str(SWAN), "--out", str(tmp_path / "curated"),
                                             "--work", str(tmp_path / "work"), "--llm", "model", "--llm-gguf", GGUF,
                                             "--questions", "formula_1/8", *options]))


def test_the_model_fills_a_swan_question_in_form(tmp_path):
    results = tmp_path / "results.jsonl"
    report = bench(tmp_path, "--mode", "lazy", "--results", str(results))
    assert "Q4_K_M" in report["llm"] or "llama.cpp" in report["llm"]
    lazy = report["modes"]["lazy"]
    assert lazy["calls"] == 1 and lazy["questions_with_fill_problems"] == 0
    assert lazy["prompt_tokens"] > 50 and 0 < lazy["completion_tokens"] <= 40
    assert lazy["seconds_per_question"] > 0 and lazy["second_run"]["tokens"] == 0
    assert lazy["factuality"]["predicted"] <= 1
    row = json.loads(results.read_text())["row"]
    assert row["ok"] and row["filled"] == {"constructors": 1}


@pytest.mark.skipif(not os.path.isfile(BLENDSQL_PYTHON), reason="BlendSQL is not installed "
                    "(scripts/install_blendsql.sh)")
def test_blendsql_runs_the_question_with_the_same_model(tmp_path, monkeypatch):
    monkeypatch.setenv(swan_blendsql.ENV_PYTHON, BLENDSQL_PYTHON)
    report = bench(tmp_path, "--mode", "blendsql")
    mode = report["modes"]["blendsql"]
    assert mode["versions"]["blendsql"] == "0.0.63"
    assert mode["errors"] == 0, mode["failures"]
    assert mode["prompt_tokens"] > 0 and mode["calls"] >= 1
