"""Adversarial statements through run_sql over stdio: none changes a file of the served folder or creates one, and
every call stays within the time, row and byte limits."""
import hashlib
import json
import pathlib
import shutil
import time

from mcp_support import build_demo_memory, serve

STATEMENTS = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "mcp_adversarial_sql.jsonl"
TIMEOUT_S, MAX_ROWS, MAX_BYTES = 1.0, 100, 65536
# Kinds whose every statement must be refused or fail; the others may run within the limits.
MUST_FAIL = {"dml", "cte_dml", "stacked", "comment_prefix", "ddl", "attach", "vacuum", "extension", "transaction"}
OUTSIDE = pathlib.Path("/tmp/relmem-adversarial-copy.sqlite")  # a VACUUM INTO target outside the folder


def snapshot(folder):
    files = {}
    for path in sorted(pathlib.Path(folder).rglob("*")):
        if path.is_file():
            stat = path.stat()
            files[str(path)] = (stat.st_size, stat.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return files


def test_the_statement_file_covers_every_kind():
    cases = [json.loads(line) for line in STATEMENTS.read_text().splitlines()]
    assert len(cases) >= 100
    assert {c["kind"] for c in cases} == MUST_FAIL | {"pragma", "runaway", "huge", "sqlite_master"}


def test_no_statement_changes_a_file_or_escapes_the_limits(demo_dir, tmp_path):
    served = tmp_path / "served"
    shutil.copytree(demo_dir, served)
    memory = build_demo_memory(served, tmp_path / "memory")
    cases = [json.loads(line) for line in STATEMENTS.read_text().splitlines()]
    OUTSIDE.unlink(missing_ok=True)
    before = snapshot(served)
    with serve("--dbs", str(served), "--memory", str(memory), "--timeout", str(TIMEOUT_S), "--max-rows",
                     str(MAX_ROWS), "--max-result-bytes", str(MAX_BYTES), cwd=str(served)) as client:
        client.initialize()
        for case in cases:
            started = time.monotonic()
            reply = client.call("run_sql", {"database": "restaurants", "sql": case["sql"], "max_rows": MAX_ROWS},
                                timeout=60)
            seconds = time.monotonic() - started
            result = reply["result"]
            assert seconds < TIMEOUT_S + 10, (case, seconds)  # generous for a loaded machine; a runaway would hang
            assert len(json.dumps(reply)) < 2 * MAX_BYTES + 20000, case
            if case["kind"] in MUST_FAIL:
                assert result["isError"], case
            if not result["isError"]:
                rows = result["structuredContent"]
                assert rows["row_count"] <= MAX_ROWS and rows["elapsed_ms"] < (TIMEOUT_S + 5) * 1000, case
        assert client.request("ping")["result"] == {}
    assert snapshot(served) == before
    assert not OUTSIDE.exists()
