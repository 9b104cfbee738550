"""The adversarial statements of tests/fixtures/adversarial_sql.txt through Catalog.execute and
`relmem sql`: no write, no new file, no traceback, and every statement within its time and memory limits.

Each pass runs in a child process, which reports per statement and its own peak memory (ru_maxrss)."""
import json
import pathlib
import subprocess
import sys
import textwrap

import pytest
from adversarial import make_database, snapshot, statements

TIMEOUT = 1.0
SLACK = 6.0  # seconds past the limit for opening, Python and a loaded 2-core machine
MAX_RSS_MB = 1500
OUTSIDE_FILES = ["/tmp/relmem_adversarial_copy.sqlite", "/tmp/relmem_adversarial_attach.sqlite",
                 "/tmp/relmem_adversarial_written"]

API_DRIVER = """
import json, resource, sys, time
import relmem
catalog = relmem.Catalog(sys.argv[1])
for line in sys.stdin:
    sql = bytes.fromhex(line.strip())
    start = time.monotonic()
    try:
        result = catalog.execute("adv", sql, timeout=float(sys.argv[2]))
        row = {"ok": result.ok, "kind": result.error_kind, "error": result.error}
    except BaseException as error:  # the test fails on any
        row = {"raised": f"{type(error).__name__}: {error}"}
    row["seconds"] = time.monotonic() - start
    print(json.dumps(row), flush=True)
print(json.dumps({"max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

CLI_DRIVER = """
import contextlib, io, json, os, resource, sys, time
from relmem import cli
for line in sys.stdin:
    sql = os.fsdecode(bytes.fromhex(line.strip()))  # as a command line hands it over: surrogates for bad bytes
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["sql", sys.argv[1], sql, "--timeout", sys.argv[2], "--json"])
        row = {"code": code, "stderr": err.getvalue(), "stdout_bytes": len(out.getvalue())}
    except BaseException as error:
        row = {"raised": f"{type(error).__name__}: {error}"}
    row["seconds"] = time.monotonic() - start
    print(json.dumps(row), flush=True)
print(json.dumps({"max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adversarial")
    make_database(folder / "adv.sqlite")
    make_database(folder / "wal.sqlite", wal=True)
    return folder


def run_driver(driver, args, cases):
    for path in OUTSIDE_FILES:
        pathlib.Path(path).unlink(missing_ok=True)
    stdin = "".join(sql.hex() + "\n" for sql, _ in cases)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(driver), *args], input=stdin, capture_output=True,
                          text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == len(cases) + 1
    assert rows[-1]["max_rss_mb"] < MAX_RSS_MB, rows[-1]
    for path in OUTSIDE_FILES:
        assert not pathlib.Path(path).exists(), f"a statement created {path}"
    return rows[:-1]


def test_fixture_holds_at_least_150_statements():
    cases = statements()
    assert len(cases) >= 150
    assert sum(1 for _, ok in cases if ok) >= 10


def test_adversarial_statements_through_catalog_execute(collection):
    before = snapshot(collection)
    cases = statements()
    rows = run_driver(API_DRIVER, [str(collection), str(TIMEOUT)], cases)
    for (sql, must_succeed), row in zip(cases, rows):
        assert "raised" not in row, (sql, row)
        assert row["seconds"] <= TIMEOUT + SLACK, (sql, row)
        if must_succeed:
            assert row["ok"], (sql, row)
        if not row["ok"]:
            assert row["kind"] in {"refused", "prepare", "runtime", "timeout", "too_large"}, (sql, row)
            assert row["error"] and "not authorized: not authorized" not in row["error"], (sql, row)
    assert snapshot(collection) == before  # no write, no -wal, -shm or journal file, nothing new


def test_adversarial_statements_through_relmem_sql_on_a_wal_database(collection):
    before = snapshot(collection)
    cases = statements()
    rows = run_driver(CLI_DRIVER, [str(collection / "wal.sqlite"), str(TIMEOUT)], cases)
    for (sql, must_succeed), row in zip(cases, rows):
        assert "raised" not in row, (sql, row)
        assert row["seconds"] <= TIMEOUT + SLACK, (sql, row)
        assert row["code"] in (0, 1), (sql, row)  # 1: refused or failed, with its one line
        assert row["code"] == 0 or len(row["stderr"].splitlines()) == 1, (sql, row)
        assert "Traceback" not in row["stderr"]
        if must_succeed:
            assert row["code"] == 0, (sql, row)
    assert snapshot(collection) == before
