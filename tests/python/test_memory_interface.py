"""The selection, value, example and row memories share one interface (relmem.Memory): build with progress, save and
load, refresh after a database file changes, memory_bytes."""
import os
import sqlite3

import pytest

import relmem
from relmem.examples import ExampleMemory
from relmem.rows import RowMemory

EXAMPLES = [{"question": "How many concerts were there in 2014?",
             "sql": "SELECT count(*) FROM concert WHERE year = 2014", "database": "concert"},
            {"question": "Which stadiums hold the most people?",
             "sql": "SELECT name FROM stadium ORDER BY capacity DESC", "database": "concert"},
            {"term": "capacity", "definition": "how many people a stadium holds"}]


def build(kind, catalog, progress):
    encoder = relmem.HashingEncoder(256)
    if kind is ExampleMemory:
        return kind.build(catalog, encoder, progress=progress, examples=EXAMPLES)
    return kind.build(catalog, encoder, progress=progress)


def probe(memory):
    """What a memory answers, to compare a loaded copy with the original."""
    if isinstance(memory, relmem.SelectionMemory):
        return [(m.database, m.score) for m in memory.select("concerts in stadiums", 2)]
    if isinstance(memory, relmem.ValueMemory):
        return [(m.value, m.score) for m in memory.lookup("concert", "stadium", "city", "Los Angeles")]
    if isinstance(memory, RowMemory):
        found = memory.search("concert", "the Ayr United stadium", ["stadium"], k=1)
        return [(r.values, r.score) for r in found["stadium"]]
    return [(e.question, score) for e, score in memory.search("concerts in 2014", k=2, min_score=0.0)]


@pytest.fixture
def catalog(tmp_path, concert_db):
    folder = tmp_path / "dbs"
    folder.mkdir()
    os.rename(concert_db, folder / "concert.sqlite")
    other = sqlite3.connect(folder / "zoo.sqlite")
    other.executescript("CREATE TABLE animal (name TEXT, species TEXT); INSERT INTO animal VALUES ('Rex', 'dog');")
    other.close()
    return folder


@pytest.mark.parametrize("kind", [relmem.SelectionMemory, relmem.ValueMemory, ExampleMemory, RowMemory],
                         ids=lambda kind: kind.__name__)
def test_every_memory_has_the_same_interface(kind, catalog, tmp_path):
    calls = []
    memory = build(kind, relmem.Catalog(str(catalog)), lambda db, done, total: calls.append((db, done, total)))
    assert isinstance(memory, relmem.Memory)
    assert calls and calls[-1][1] == calls[-1][2] and [c[1] for c in calls] == list(range(1, len(calls) + 1))
    assert memory.memory_bytes > 0

    memory.save(str(tmp_path / "saved"))
    loaded = kind.load(str(tmp_path / "saved"))
    assert probe(loaded) == probe(memory) != []

    unchanged = loaded.refresh(relmem.Catalog(str(catalog)))
    assert isinstance(unchanged, relmem.RefreshReport)
    assert unchanged == relmem.RefreshReport(unchanged=2)

    db = sqlite3.connect(catalog / "concert.sqlite")
    db.execute("INSERT INTO stadium VALUES (3, 'Hampden Park', 'Glasgow', 52000)")
    db.commit()
    db.close()
    os.utime(catalog / "concert.sqlite", ns=(1, 1))  # a different modification time, whatever the clock's resolution
    os.remove(catalog / "zoo.sqlite")
    calls.clear()
    report = loaded.refresh(relmem.Catalog(str(catalog)), progress=lambda *call: calls.append(call))
    assert (report.added, report.updated, report.removed, report.unchanged) == ([], ["concert"], ["zoo"], 0)
    assert calls == [("concert", 1, 1)]
    assert loaded.refresh(relmem.Catalog(str(catalog))) == relmem.RefreshReport(unchanged=1)


def test_refresh_drops_examples_a_changed_schema_no_longer_fits(catalog):
    memory = build(ExampleMemory, relmem.Catalog(str(catalog)), progress=False)
    db = sqlite3.connect(catalog / "concert.sqlite")
    db.execute("ALTER TABLE stadium RENAME COLUMN capacity TO seats")
    db.commit()
    db.close()
    os.utime(catalog / "concert.sqlite", ns=(1, 1))
    assert memory.refresh(relmem.Catalog(str(catalog))).updated == ["concert"]
    assert [e.question or e.term for e in memory.examples] == [EXAMPLES[0]["question"], "capacity"]
    assert [e.question for e, _ in memory.search("concerts in 2014", k=3, min_score=0.0) if e.kind == "sql"] == [
        EXAMPLES[0]["question"]]


def test_examples_must_name_databases_of_the_catalog(catalog):
    with pytest.raises(relmem.Error, match="nowhere"):
        ExampleMemory.build(relmem.Catalog(str(catalog)), relmem.HashingEncoder(64),
                            examples=[{"question": "q", "sql": "SELECT 1", "database": "nowhere"}])


def test_progress_must_be_a_bool_or_a_callable(catalog):
    with pytest.raises(TypeError, match="progress"):
        relmem.SelectionMemory.build(relmem.Catalog(str(catalog)), relmem.HashingEncoder(64), progress="yes")
