"""`relmem bench swan --mode blendsql`: SWAN's BlendSQL queries rewritten for the installed BlendSQL, run by a
worker process and scored like relmem's modes; skipped cleanly where BlendSQL is not installed. A stand-in worker
plays BlendSQL here; test_swan_local_llm.py runs the real one where it is installed."""
import argparse
import sqlite3
import sys
import textwrap

import pytest

from conftest import SHARED, requires_shared
import relmem
from relmem.bench import swan as swan_bench
from relmem.bench import swan_blendsql
from relmem.hybrid import swan as swan_data

SWAN = SHARED / "data" / "swan"


def bench(tmp_path, *options):
    parser = argparse.ArgumentParser()
    swan_bench.add_arguments(parser)
    return swan_bench.run(parser.parse_args(["--swan", str(SWAN), "--out", str(tmp_path / "curated"),
                                             "--work", str(tmp_path / "work"), *options]))


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


@requires_shared(SWAN)
def test_every_swan_query_is_rewritten_in_the_installed_syntax(tmp_path):
    rewritten = {}
    for database in swan_data.QUESTION_FILES:
        curated, _ = swan_data.build_curated(SWAN, database, tmp_path)
        with sqlite3.connect(f"file:{curated}?mode=ro", uri=True) as connection:
            for q in swan_data.load_questions(SWAN, [database]):
                rewritten[q.id] = " ".join(swan_blendsql.rewrite(q.hybrid_sql, connection).split())
    assert len(rewritten) == 120 and not any("::" in sql for sql in rewritten.values())
    # adjacent literals without a comma, a table named by its alias
    assert "{{LLMMap('Provide the country name.', T1.location)}} = 'Germany'" in rewritten["formula_1/2"]
    # a subquery as context, options from a column, the second WITH keyword dropped
    assert ("context=(SELECT superhero_name FROM superhero WHERE superhero.superhero_name = '3-D Man'), "
            "options=superpower.power_name)}} AS powers ), Splitter AS") in rewritten["superhero/0"]
    assert "options=('1', '2', '3'," in " ".join(rewritten.values())


def test_a_call_it_cannot_write_is_an_error():
    with pytest.raises(relmem.Error, match="LLMMap or LLMQA"):
        swan_blendsql.write_call("LLMJoin(left_on='a::x', right_on='b::y')", None, lambda t: t)


@requires_shared(SWAN)
def test_without_blendsql_the_mode_is_skipped_and_the_rest_runs(tmp_path, monkeypatch, gguf):
    monkeypatch.setenv(swan_blendsql.ENV_PYTHON, str(tmp_path / "absent" / "python"))
    monkeypatch.setattr(relmem.llm, "from_args", lambda args: relmem.llm.CallableLLM(lambda m, **p: "{}", name="x"))
    report = bench(tmp_path, "--mode", "lazy,blendsql", "--llm", "model", "--llm-gguf", str(gguf),
                   "--questions", "formula_1/8")
    assert "install_blendsql.sh" in report["modes"]["blendsql"]["skipped"]
    assert report["modes"]["lazy"]["questions"] == 1


@requires_shared(SWAN)
def test_blendsql_needs_a_real_model_in_process(tmp_path, gguf):
    with pytest.raises(relmem.Error, match="--llm model"):
        bench(tmp_path, "--mode", "blendsql", "--questions", "formula_1/8")
    with pytest.raises(relmem.Error, match="in process"):
        bench(tmp_path, "--mode", "blendsql", "--llm", "model", "--llm-base-url", "http://localhost:1/v1",
              "--llm-model", "m", "--questions", "formula_1/8")


STAND_IN = """\
import json, sys
print(json.dumps({"ready": True, "blendsql": "stand-in"}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    answer = {"id": request["id"], "seconds": 0.5, "prompt_tokens": 100, "completion_tokens": 7, "calls": 1}
    if request["id"] == "formula_1/8":
        answer.update(columns=["nationality"], rows=[["British"]])
    else:
        answer["error"] = "ValueError: the model said no"
    print(json.dumps(answer), flush=True)
"""


@requires_shared(SWAN)
def test_the_worker_s_answers_are_scored_like_relmem_s(tmp_path, monkeypatch, gguf):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    python = tmp_path / "python"
    python.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        exec {sys.executable} {script}
    """))
    python.chmod(0o755)
    monkeypatch.setenv(swan_blendsql.ENV_PYTHON, str(python))
    monkeypatch.setattr(swan_blendsql, "describe_gguf", lambda path: "stand-in model (Q4_K_M, llama.cpp)")
    results = tmp_path / "results.jsonl"
    report = bench(tmp_path, "--mode", "blendsql", "--llm", "model", "--llm-gguf", str(gguf),
                   "--questions", "formula_1/0,formula_1/8", "--results", str(results))
    mode = report["modes"]["blendsql"]
    assert report["llm"] == "stand-in model (Q4_K_M, llama.cpp)"
    assert mode["versions"] == {"blendsql": "stand-in"}
    assert mode["questions"] == 2 and mode["errors"] == 1
    assert mode["prompt_tokens"] == 200 and mode["completion_tokens"] == 14 and mode["seconds_per_question"] == 0.5
    failed = report["per_question"]["formula_1/0"]["blendsql"]
    assert failed["error"] == "BlendSQL: ValueError: the model said no"
    assert "{{LLMMap('Provide the nationality.', constructors.name)}}" in \
        report["per_question"]["formula_1/8"]["blendsql"]["sql"]
    assert len(results.read_text().splitlines()) == 2
