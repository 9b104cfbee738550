"""Regression tests for inputs that once failed: bad bytes, damaged memory folders, failed saves, WAL and locked
databases, folders named like databases, broken pipes, and memories updated while they answer."""
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from adversarial import make_database, snapshot

import relmem
from relmem.agent.memories import Memories

RELMEM = [sys.executable, "-m", "relmem.cli"]


def run(*args, timeout=120):
    """`relmem ARGS`; args may be bytes (a command line is bytes)."""
    return subprocess.run([*RELMEM, *args], capture_output=True, timeout=timeout)


def one_error_line(done):
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    assert done.returncode != 0 and "Traceback" not in done.stderr.decode("utf-8", "replace"), done.stderr
    assert len(lines) >= 1
    return lines[-1]


@pytest.fixture
def db(tmp_path):
    return make_database(tmp_path / "adv.sqlite")


# -- the executor through `relmem sql`

def test_sql_that_is_not_utf8_is_refused_in_one_line(db):
    line = one_error_line(run("sql", str(db).encode(), b"SELECT '\xff'"))
    assert "not valid UTF-8 (byte 0xFF at offset 8)" in line


def test_one_long_function_call_keeps_the_time_limit(db):
    start = time.monotonic()
    done = run("sql", str(db), "SELECT instr(printf('%.*c', 4000000, 'a'), printf('%.*c', 400000, 'a') || 'b'), "
                        "printf('%.*c', 4000000, 'a') GLOB '*' || printf('%.*c', 40000, 'a') || 'b'",
               "--timeout", "1")
    assert time.monotonic() - start < 8  # the interpreter's start-up included; 16 s and more before
    assert "timeout" in one_error_line(done)


def test_results_are_capped_in_bytes_with_a_clear_error(db):
    assert "result too large" in one_error_line(run("sql", str(db), "SELECT zeroblob(2000000) FROM big"))
    assert "result too large" in one_error_line(run("sql", str(db), "SELECT randomblob(1000000000)"))
    done = run("sql", str(db), "SELECT zeroblob(100) FROM big", "--max-bytes", "10000")
    assert "result too large" in one_error_line(done)


def test_blobs_are_typed_json_values(db):
    done = run("sql", str(db), "SELECT x'00ff' AS b, 'text' AS t, NULL AS n", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"] == [[{"$blob": "AP8=", "length": 2}, "text", None]]
    assert b"x'00ff' (2 bytes)" in run("sql", str(db), "SELECT x'00ff'").stdout


def test_nul_byte_and_pointer_functions_are_refused(db):
    catalog = relmem.Catalog(str(db))
    result = catalog.execute("adv", "SELECT 1\x00; DELETE FROM t")
    assert result.error_kind == "refused" and "NUL byte at offset 8" in result.error
    for sql in ("SELECT hex(fts3_tokenizer('simple'))", "SELECT fts3_tokenizer('x', x'4141414141414141')"):
        result = catalog.execute("adv", sql)
        assert result.error_kind == "refused" and "calls fts3_tokenizer()" in result.error
        assert "not authorized" not in result.error


def test_table_valued_functions_and_fts_queries_run(db):
    catalog = relmem.Catalog(str(db))
    assert catalog.execute("adv", "SELECT value FROM json_each('[1, 2]')").rows == [(1,), (2,)]
    assert catalog.execute("adv", "SELECT count(*) FROM json_tree('{\"a\": [1]}')").rows == [(3,)]
    assert catalog.execute("adv", "SELECT body FROM docs WHERE docs MATCH 'hello'").rows == [("hello world",)]
    assert catalog.execute("adv", "SELECT name FROM pragma_table_info('t')").rows == [("a",), ("b",)]
    assert catalog.distinct_values("adv", "docs", "body", 10)  # an FTS table no longer stops the memories


def test_bounded_functions_keep_sqlite_semantics(db):
    catalog = relmem.Catalog(str(db))
    sql = ("SELECT instr('héllo', 'l'), instr(x'010203', x'03'), instr('abc', ''), instr(NULL, 'a'), "
           "replace('aaa', 'a', 'bb'), replace('abc', '', 'x'), 'ABC' LIKE 'a_c', 'a%c' LIKE 'a!%c' ESCAPE '!', "
           "'abc' LIKE 'a%%', 'Ä' LIKE 'ä', 'abc' GLOB 'a[a-c]?', 'abc' GLOB 'A*', 'x' GLOB '[^a-c]', "
           "']' GLOB '[]]', 'ab' GLOB 'a[', 'a_' LIKE 'a\\_' ESCAPE '\\'")
    expected = sqlite3.connect(":memory:").execute(sql).fetchall()
    assert catalog.execute("adv", sql).rows == expected


def test_wal_databases_are_read_without_leaving_files(tmp_path):
    make_database(tmp_path / "wal.sqlite", wal=True)
    before = snapshot(tmp_path)
    catalog = relmem.Catalog(str(tmp_path))
    catalog.card("wal")
    assert catalog.execute("wal", "SELECT count(*) FROM big").rows == [(1000,)]
    relmem.SelectionMemory.build(catalog, relmem.HashingEncoder(64))
    assert snapshot(tmp_path) == before


# -- catalogs with bad names, folders and locks

def test_names_that_are_not_utf8_skip_their_database_with_a_reason(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    make_database(folder / "good.sqlite")
    shutil.copy(folder / "good.sqlite", os.fsencode(folder) + b"/caf\xe9.sqlite")
    subprocess.run(["sqlite3", str(folder / "latin.sqlite")], input=b'CREATE TABLE "caf\xe9" (x);', check=True)
    catalog = relmem.Catalog(str(folder))
    assert catalog.databases == ["good"]
    reasons = dict(catalog.skipped)
    assert len(reasons) == 2 and all("not valid UTF-8" in r for r in reasons.values())
    done = run("catalog", str(folder))
    assert done.returncode == 0 and b"good (" in done.stdout and b"not valid UTF-8" in done.stderr


def test_index_and_ask_work_around_bad_names_and_fts_databases(tmp_path):
    """A Latin-1 file name or table name, and an FTS database, in the folder that is indexed."""
    folder = tmp_path / "dbs"
    folder.mkdir()
    make_database(folder / "fts.sqlite")  # holds an FTS5 table
    shutil.copy(folder / "fts.sqlite", os.fsencode(folder) + b"/caf\xe9.sqlite")
    subprocess.run(["sqlite3", str(folder / "latin.sqlite")], input=b'CREATE TABLE "caf\xe9" (x);', check=True)
    out = tmp_path / "memory"
    done = run("index", "--dbs", str(folder), "--out", str(out), "--encoder", "hashing")
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert done.stderr.count(b"not valid UTF-8") == 2
    assert Memories.load(str(out)).selection.databases == ["fts"]
    done = run("ask", "--dbs", str(folder), "--memory", str(out), "which documents say hello?")
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr


def test_a_folder_named_like_a_database_is_skipped(tmp_path):
    make_database(tmp_path / "good.sqlite")
    (tmp_path / "x.sqlite").mkdir()
    catalog = relmem.Catalog(str(tmp_path))
    assert catalog.databases == ["good"]
    assert dict(catalog.skipped)[str(tmp_path / "x.sqlite")] == "a folder, not a database file"
    assert "it is a folder" in one_error_line(run("sql", str(tmp_path / "x.sqlite"), "SELECT 1"))


def test_a_locked_database_is_reported_as_locked_and_strict_index_fails(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    make_database(folder / "good.sqlite")
    make_database(folder / "busy.sqlite")
    holder = sqlite3.connect(folder / "busy.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:  # checked from other processes: closing a file in this one would drop the holder's lock (POSIX locks)
        done = run("catalog", str(folder))
        assert done.returncode == 0 and done.stdout.startswith(b"good (")
        assert f"skipped {folder / 'busy.sqlite'}: ".encode() in done.stderr and b"is locked" in done.stderr
        out = tmp_path / "memory"
        done = run("index", "--dbs", str(folder), "--out", str(out), "--encoder", "hashing", "--strict")
        assert done.returncode == 1 and b"skipped" in done.stderr and not out.exists()
    finally:
        holder.close()


def test_a_broken_pipe_ends_quietly(tmp_path):
    db = sqlite3.connect(tmp_path / "many.sqlite")
    db.executescript("".join(f"CREATE TABLE table_with_a_long_name_{i} (column_{i} TEXT);" for i in range(4000)))
    db.close()
    done = subprocess.run(f"{sys.executable} -m relmem.cli catalog {tmp_path} | head -1", shell=True,
                          capture_output=True, timeout=120)
    assert done.stdout.startswith(b"many (4000 tables)") and b"Traceback" not in done.stderr
    assert done.stderr == b""


# -- memory folders

@pytest.fixture(scope="module")
def saved_memory(tmp_path_factory):
    folder = tmp_path_factory.mktemp("memory")
    dbs = folder / "dbs"
    dbs.mkdir()
    make_database(dbs / "adv.sqlite")
    con = sqlite3.connect(dbs / "zoo.sqlite")
    con.executescript("CREATE TABLE animal (name TEXT, species TEXT); INSERT INTO animal VALUES ('Rex', 'dog');")
    con.close()
    catalog = relmem.Catalog(str(dbs))
    memories = Memories.build(catalog, encoder="hashing")
    memories.save(str(folder / "mem"))
    return catalog, memories, folder / "mem"


def damaged_copy(memory_folder, tmp_path, name, change):
    copy = tmp_path / "copy"
    shutil.copytree(memory_folder, copy)
    path = copy / name
    path.write_bytes(change(path.read_bytes()))
    return copy


def flip(offset):
    return lambda data: data[:offset % len(data)] + bytes([data[offset % len(data)] ^ 0x01]) + data[offset % len(data) + 1:]


def test_every_single_byte_flip_in_checksummed_files_names_the_file(saved_memory, tmp_path):
    _, _, folder = saved_memory
    files = [p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json"
             and p.name != "examples.json"]
    assert any(p.name == "values.postings" for p in files) and any(p.suffix == ".values" for p in files)
    for name in files:
        size = (folder / name).stat().st_size
        for offset in (0, size // 3, size // 2, size - 1):
            copy = damaged_copy(folder, tmp_path, name, flip(offset))
            with pytest.raises(relmem.Error, match=str(name.name).replace(".", r"\.")):
                Memories.load(str(copy))
            shutil.rmtree(copy)


@pytest.mark.parametrize("name", ["manifest.json", "selection/manifest.json", "values/manifest.json",
                                  "examples/examples.json"])
@pytest.mark.parametrize("content", [b"[]", b"{", b'{"format": 5, "version": "x"}', b"\xff\xfe"])
def test_malformed_manifests_give_a_clear_error_naming_the_file(saved_memory, tmp_path, name, content):
    _, _, folder = saved_memory
    copy = damaged_copy(folder, tmp_path, name, lambda _: content)
    with pytest.raises(relmem.Error, match="manifest|examples.json") as error:
        Memories.load(str(copy))
    assert os.path.basename(name) in str(error.value)


def test_ask_with_a_damaged_memory_prints_one_line(saved_memory, tmp_path):
    catalog, _, folder = saved_memory
    copy = damaged_copy(folder, tmp_path, "selection/values.postings", flip(40))
    dbs = pathlib.Path(catalog.path("adv")).parent
    line = one_error_line(run("ask", "--dbs", str(dbs), "--memory", str(copy), "how many?"))
    assert "values.postings" in line and "corrupt" in line


def test_a_failed_save_leaves_the_old_memory_intact(saved_memory, tmp_path):
    catalog, memories, folder = saved_memory
    target = tmp_path / "mem"
    shutil.copytree(folder, target)
    before = snapshot(target)

    class Failing:
        def save(self, path):
            raise relmem.Error("disk full (simulated)")

    broken = Memories(memories.encoder, memories.selection, Failing(), memories.examples, {})
    with pytest.raises(relmem.Error, match="simulated"):
        broken.save(str(target))
    assert snapshot(target) == before
    assert sorted(os.listdir(tmp_path)) == ["mem"]  # no temporary folder left behind
    memories.save(str(target))  # a good save replaces it whole
    assert Memories.load(str(target)).selection.databases == ["adv", "zoo"]


def test_saving_into_a_folder_of_other_files_is_refused(saved_memory, tmp_path):
    _, memories, _ = saved_memory
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(relmem.Error, match="other files"):
        memories.save(str(tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "mine"


# -- concurrency

def answers_while_updating(update, ask, seconds=3.0, askers=7):
    """Calls `update` over and over in one thread and `ask` in `askers` others for `seconds`; `ask` returns what it
    got wrong ("" when right), an exception counts as wrong. Returns (what was wrong, number of answers); an update
    that raises ends the updates and is the first thing wrong."""
    stop = time.monotonic() + seconds
    failures, answers = [], [0]

    def updating():
        try:
            while time.monotonic() < stop:
                update()
        except Exception as error:  # noqa: BLE001 - an update that fails makes the test meaningless
            failures.insert(0, f"update failed: {error!r}")

    def asking():
        while time.monotonic() < stop:
            try:
                wrong = ask()
            except Exception as error:  # noqa: BLE001 - any error is a failure of the test
                wrong = repr(error)
            if wrong:
                failures.append(wrong)
            answers[0] += 1

    threads = [threading.Thread(target=updating)] + [threading.Thread(target=asking) for _ in range(askers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures, answers[0]


def test_selection_memory_answers_correctly_while_it_is_updated(saved_memory):
    """One thread re-adds and refreshes databases while seven ask: every answer must be the single-thread one."""
    catalog, _, _ = saved_memory
    memory = relmem.SelectionMemory.build(catalog, relmem.HashingEncoder(128))
    questions = ["how many animals are dogs", "documents that say hello", "the names in table t"]
    expected = {q: [m.database for m in memory.select(q, 5)] for q in questions}

    def update():
        memory.add(catalog, "zoo")
        memory.add(catalog, "adv")
        memory.refresh(catalog)

    def ask():
        got = {q: [m.database for m in memory.select(q, 5)] for q in questions}
        return "" if got == expected else str(got)

    failures, answers = answers_while_updating(update, ask)
    assert not failures, failures[:5]
    assert answers > 20


def test_value_memory_answers_correctly_while_it_is_updated(tmp_path):
    """One thread rebuilds, refreshes and removes databases and learns an alias while seven look values up and link
    questions (the GIL released): every answer must be the single-thread one."""
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    make_database(dbs / "adv.sqlite")
    con = sqlite3.connect(dbs / "shops.sqlite")
    con.execute("CREATE TABLE shop (id INTEGER PRIMARY KEY, city TEXT, owner TEXT)")
    con.executemany("INSERT INTO shop VALUES (?, ?, ?)", [(i, f"City {i}", f"Owner {i % 40}") for i in range(2000)])
    con.commit()
    con.close()
    catalog = relmem.Catalog(str(dbs))
    memory = relmem.ValueMemory.build(catalog, relmem.HashingEncoder(128))
    asks = [("shops", "shop", "city", "city 1234"), ("shops", "shop", "owner", "ownr 7")]
    question = " ".join(f"is City {i} or Owner {i % 40} near" for i in range(0, 400, 37))  # long: most time in C++

    def answer():
        return ([[c.value for c in memory.lookup(*a, k=5)] for a in asks],
                [(m.span, m.value) for m in memory.link("shops", question)])

    expected = answer()
    assert all(expected[0]) and expected[1]

    def update():
        memory.add(catalog, "shops")
        memory.remove("adv")
        memory.refresh(catalog)
        memory.add_alias("shops", "shop", "owner", "the boss", "Owner 1", "test")

    def ask():
        got = answer()
        return "" if got == expected else str(got)

    failures, answers = answers_while_updating(update, ask)
    assert not failures, failures[:5]
    assert answers > 20
