"""`relmem eval build`: evaluation sets composed from Spider questions and the zero-database questions."""
import json
import subprocess
import sys

import pytest
from conftest import SHARED, SPIDER, requires_shared

import relmem
from relmem.eval import load_set, parse_counts

ZERO_DB = SHARED / "data" / "zero_db"


def test_counts_are_a_total_or_per_kind():
    assert parse_counts(["500"]) == {"zero": 100, "single": 200, "double": 100, "multi": 100}
    assert parse_counts(["single=3,double=2", "zero=1"]) == {"zero": 1, "single": 3, "double": 2, "multi": 0}
    for bad in (["many"], ["triple=2"], ["single=-1"]):
        with pytest.raises(relmem.Error):
            parse_counts(bad)


@requires_shared(SPIDER)
@requires_shared(ZERO_DB)
def test_build_composes_every_kind_with_its_gold(tmp_path):
    out = tmp_path / "set.jsonl"
    command = [sys.executable, "-m", "relmem.cli", "eval", "build", "--spider", str(SPIDER), "--zero-db",
               str(ZERO_DB), "--out", str(out), "--n", "zero=4,single=4,double=3,multi=4", "--seed", "3"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    items = load_set(out)
    assert [item.kind for item in items].count("single") == 4 and len(items) == 15
    assert {item.answer["type"] for item in items if item.kind == "zero"} == {"text", "choice"}
    for item in items:
        assert len(set(item.databases)) == len(item.parts)
        if item.kind == "double":
            assert item.question.startswith("Which question has a larger number as its answer. Q1: ")
            a, b = (part.rows[0][0] for part in item.parts)
            assert item.answer["question"] == (1 if a > b else 2)
        if item.kind == "multi":
            assert item.question == " ".join(part.question for part in item.parts)
    assert sorted(len(item.parts) for item in items if item.kind == "multi") == [2, 2, 3, 3]
    again = subprocess.run(command[:-6] + ["--out", str(tmp_path / "again.jsonl")] + command[-4:],
                           capture_output=True, text=True)
    assert again.returncode == 0 and (tmp_path / "again.jsonl").read_text() == out.read_text()


def test_build_explains_missing_data(tmp_path):
    (tmp_path / "empty").mkdir()
    result = subprocess.run([sys.executable, "-m", "relmem.cli", "eval", "build", "--spider", str(tmp_path / "empty"),
                             "--zero-db", str(tmp_path / "empty"), "--out", str(tmp_path / "s.jsonl"), "--n", "zero=2"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "cannot read" in result.stderr


@requires_shared(SPIDER)
@requires_shared(ZERO_DB)
def test_build_draws_from_the_training_questions_when_asked(tmp_path):
    out = tmp_path / "train.jsonl"
    result = subprocess.run([sys.executable, "-m", "relmem.cli", "eval", "build", "--spider", str(SPIDER), "--zero-db",
                             str(ZERO_DB), "--out", str(out), "--n", "single=5,double=2", "--questions",
                             "train_spider.json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    items = load_set(out)
    dev_databases = {entry["db_id"] for entry in json.loads((SPIDER / "dev.json").read_text())}
    assert len(items) == 7 and {item.source for item in items} == {"spider/train_spider.json"}
    assert not {database for item in items for database in item.databases} & dev_databases
    missing = subprocess.run([sys.executable, "-m", "relmem.cli", "eval", "build", "--spider", str(SPIDER),
                              "--zero-db", str(ZERO_DB), "--out", str(tmp_path / "none.jsonl"), "--n", "single=1",
                              "--questions", "nowhere.json"], capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
