"""Every command that writes, with its output pointed at each of its inputs: refused with one line naming both
paths, and every input byte-identical afterwards (SHA-256 before and after). docs/hardening.md lists the writers."""
import hashlib
import os
import pathlib
import subprocess
import sys

import pytest
from adversarial import make_database

import relmem
from relmem import outputs
from relmem.hybrid import swan as swan_data

ROOT = pathlib.Path(__file__).resolve().parents[2]
RELMEM = [sys.executable, "-m", "relmem.cli"]


def run(*args, env=None):
    return subprocess.run([*RELMEM, *map(str, args)], capture_output=True, text=True, timeout=300, env=env)


def digests(*roots):
    """SHA-256 of every file below (or at) each root."""
    found = {}
    for root in map(pathlib.Path, roots):
        for path in ([root] if root.is_file() else sorted(root.rglob("*"))):
            if path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def assert_refused(done, *paths):
    """One error line naming every one of `paths`, no traceback."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    for path in paths:
        assert str(path) in line, line
    return line


@pytest.fixture
def world(tmp_path):
    """Inputs of every kind: a database folder, a memory folder, example, description, set and output files."""
    dbs = tmp_path / "dbs"
    (dbs / "shop").mkdir(parents=True)
    make_database(dbs / "shop" / "shop.sqlite")
    make_database(dbs / "zoo.sqlite")
    files = {"examples": tmp_path / "examples.json", "descriptions": tmp_path / "descriptions.json",
             "set": tmp_path / "set.jsonl", "out": tmp_path / "run.jsonl"}
    files["examples"].write_text('[{"term": "big", "definition": "large"}]')
    files["descriptions"].write_text('{"zoo": "animals"}')
    files["set"].write_text('{"id": "1", "kind": "zero", "question": "hi", "answer": {"type": "text", "text": "x"}}\n')
    files["out"].write_text('{"id": "1"}\n')
    memory = tmp_path / "memory"
    done = run("index", "--dbs", dbs, "--out", memory, "--encoder", "hashing")
    assert done.returncode == 0, done.stderr
    return {"root": tmp_path, "dbs": dbs, "memory": memory, **files}


def inside_and_around(path):
    """The output places that collide with an input, each with whether the refusal must name that input: the
    input itself, a path inside it (a folder's) and the folder that holds it (which may hold other inputs too)."""
    places = [(path, True), (path.parent, False)]
    if path.is_dir():
        places.append((path / "out", True))
    return places


# -- relmem index --out

@pytest.mark.parametrize("target", ["dbs", "examples", "descriptions"])
def test_index_out_on_an_input_is_refused(world, target):
    before = digests(world["root"])
    for out, names_it in inside_and_around(world[target]):
        done = run("index", "--dbs", world["dbs"], "--examples", world["examples"],
                   "--descriptions", world["descriptions"], "--encoder", "hashing", "--out", out)
        assert_refused(done, out, *([world[target]] if names_it else []))
    assert digests(world["root"]) == before


# -- relmem bench swan --out/--work (the originals live in --swan)

@pytest.fixture
def swan_dir(tmp_path):
    folder = tmp_path / "swan"
    (folder / "databases" / "original" / "superhero").mkdir(parents=True)
    make_database(folder / "databases" / "original" / "superhero" / "superhero.sqlite")
    return folder


def test_bench_swan_dbs_naming_the_originals_is_refused_and_they_stay(swan_dir):
    original = swan_dir / "databases" / "original"
    before = digests(swan_dir)
    done = run("bench", "swan", "--swan", swan_dir, "--dbs", original, "--llm", "oracle-filler", "--mode", "lazy")
    assert "--out" in assert_refused(done)
    for flag in ("--out", "--work"):
        for out in (swan_dir, original, original / "superhero", swan_dir.parent):
            assert_refused(run("bench", "swan", "--swan", swan_dir, flag, out, "--mode", "lazy"), out, swan_dir)
    assert digests(swan_dir) == before


def test_build_curated_refuses_the_swan_folder_and_keeps_the_original(swan_dir):
    before = digests(swan_dir)
    for out in (swan_dir / "databases" / "original", swan_dir, swan_dir / "curated"):
        with pytest.raises(relmem.Error, match="--swan"):
            swan_data.build_curated(swan_dir, "superhero", out)
    assert digests(swan_dir) == before


# -- relmem eval build | run | report

def test_eval_build_out_on_an_input_or_an_existing_file_is_refused(world, tmp_path):
    spider, zero = tmp_path / "spider", tmp_path / "zero"
    (spider / "database").mkdir(parents=True)
    (spider / "dev.json").write_text("[]")
    zero.mkdir()
    (zero / "notes.txt").write_text("kept")
    before = digests(tmp_path)
    for target in (spider, zero):
        for out, names_it in inside_and_around(target):
            done = run("eval", "build", "--spider", spider, "--zero-db", zero, "--out", out)
            assert_refused(done, out, *([target] if names_it else []))
    assert_refused(run("eval", "build", "--spider", spider, "--zero-db", zero, "--out", world["out"]), world["out"])
    assert digests(tmp_path) == before


@pytest.mark.parametrize("target", ["set", "dbs", "memory"])
def test_eval_run_out_on_an_input_is_refused(world, target):
    before = digests(world["root"])
    for out, names_it in inside_and_around(world[target]):
        done = run("eval", "run", "--set", world["set"], "--dbs", world["dbs"], "--memory", world["memory"],
                   "--llm", "gold-simulator", "--out", out)
        assert_refused(done, out, *([world[target]] if names_it else []))
    assert digests(world["root"]) == before


def test_eval_run_resume_never_overwrites_another_output(world, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "9"}\n')
    before = digests(world["root"])
    done = run("eval", "run", "--set", world["set"], "--dbs", world["dbs"], "--memory", world["memory"],
               "--llm", "gold-simulator", "--resume", world["out"], "--out", other)
    assert_refused(done, other)
    assert digests(world["root"]) == before


def test_eval_report_plots_on_its_outputs_is_refused(world):
    before = digests(world["root"])
    for plots in (world["out"], world["root"]):
        assert_refused(run("eval", "report", world["out"], "--plots", plots), plots, world["out"])
    assert digests(world["root"]) == before


def test_bench_selection_keep_on_an_input_is_refused(world):
    before = digests(world["root"])
    for keep in (world["dbs"], world["dbs"] / "kept", world["set"]):
        done = run("bench", "selection", "--dbs", world["dbs"], "--questions", world["set"], "--synthetic", "100",
                   "--keep", keep)
        assert_refused(done, keep)
    assert digests(world["root"]) == before


# -- relmem values aliases, the LLM response cache, relmem demo

def test_values_aliases_never_write_outside_a_value_memory(world):
    before = digests(world["root"])
    done = run("values", "aliases", "add", "--memory", world["dbs"], "--db", "zoo", "--table", "animal",
               "--column", "name", "--written", "x", "--stored", "y")
    assert_refused(done, world["dbs"])
    assert digests(world["root"]) == before


@pytest.mark.parametrize("command", ["ask", "serve"])
def test_llm_cache_on_an_input_is_refused(world, command):
    before = digests(world["root"])
    for cache in (world["dbs"] / "zoo.sqlite", world["dbs"] / "cache.sqlite", world["memory"] / "cache.sqlite"):
        args = ["--dbs", world["dbs"], "--memory", world["memory"], "--llm-base-url", "http://127.0.0.1:9/v1",
                "--llm-model", "m", "--llm-cache", cache] + (["question"] if command == "ask" else [])
        assert_refused(run(command, *args), cache)
    assert digests(world["root"]) == before


def test_demo_memory_inside_its_databases_is_refused(world):
    before = digests(world["root"])
    done = run("demo", "--dir", world["dbs"], "--memory", world["dbs"] / "memory", "--encoder", "hashing")
    assert_refused(done, world["dbs"] / "memory", world["dbs"])
    assert digests(world["root"]) == before


# -- the fill store and the model cache

def test_fill_store_never_opens_a_users_database(world):
    from relmem.hybrid import FillStore
    before = digests(world["root"])
    for path in (world["dbs"] / "zoo.sqlite", world["dbs"] / "shop" / "shop.sqlite"):
        with pytest.raises(relmem.Error, match="fill store"):
            FillStore(str(path))
    assert digests(world["root"]) == before


def test_model_install_never_replaces_a_folder_it_did_not_install(tmp_path):
    folder = tmp_path / "home" / "models" / "use-lite"
    folder.mkdir(parents=True)
    (folder / "model.json").write_text("mine")
    before = digests(tmp_path)
    done = subprocess.run(["bash", ROOT / "scripts" / "install_models.sh"], capture_output=True, text=True,
                          env={**os.environ, "RELMEM_HOME": str(tmp_path / "home")}, timeout=60)
    assert done.returncode != 0 and str(folder) in done.stderr and "left as it is" in done.stderr
    assert digests(tmp_path) == before


# -- the helper itself

def test_new_files_replace_only_what_this_run_wrote(tmp_path):
    mine = tmp_path / "a" / "report.json"
    outputs.write_file(mine, "one")
    outputs.write_file(mine, "two")  # written by this run: replaced whole
    assert mine.read_text() == "two"
    theirs = tmp_path / "theirs.json"
    theirs.write_text("keep")
    with pytest.raises(relmem.Error, match="did not write it in this run"):
        outputs.write_file(theirs, "x")
    assert theirs.read_text() == "keep"
    with pytest.raises(ZeroDivisionError):
        with outputs.new_file(tmp_path / "failed.json") as temporary:
            pathlib.Path(temporary).write_text("half")
            1 / 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "theirs.json"]  # no temporary left behind
