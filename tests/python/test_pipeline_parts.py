"""The pipeline's parts on their own: the example memory, saved memories, tables and traces. (The read-only gate is
the executor's alone: tests/python/test_catalog.py and tests/cpp/test_executor.cpp.)"""
import json

import pytest

import relmem
from relmem.agent import Memories, State, format_trace
from relmem.agent.tables import format_table
from relmem.examples import Example, ExampleMemory, load_records


def test_example_memory_search_threshold_and_round_trip(tmp_path):
    encoder = relmem.load_encoder("hashing")
    memory = ExampleMemory(encoder)
    memory.add([{"question": "How many Italian restaurants are in Seattle?", "sql": "SELECT 1", "database": "r"},
                {"term": "R&D", "definition": "research and development department"}])
    memory.add_example("List all hospitals with a trauma center", "SELECT 2", "hospitals")
    best, score = memory.search("How many Italian restaurants are in Boston?", k=1, min_score=0.0)[0]
    assert best.sql == "SELECT 1" and 0.5 < score <= 1.0
    assert memory.search("How many Italian restaurants are in Boston?", k=3, min_score=0.99) == []
    memory.save(tmp_path / "examples")
    loaded = ExampleMemory.load(tmp_path / "examples")
    assert loaded.examples == memory.examples and loaded.encoder.name == encoder.name
    assert loaded.search("research and development", k=1, min_score=0.0)[0][0].kind == "term"


def test_example_records_from_json_and_json_lines(tmp_path):
    records = [{"question": "q", "sql": "SELECT 1", "database": "d"}, {"term": "t", "definition": "d"}]
    (tmp_path / "list.json").write_text(json.dumps(records))
    (tmp_path / "lines.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert load_records(tmp_path / "list.json") == load_records(tmp_path / "lines.jsonl") == [
        Example("sql", question="q", sql="SELECT 1", database="d"), Example("term", term="t", definition="d")]
    (tmp_path / "bad.json").write_text('[{"question": "no sql"}]')
    with pytest.raises(relmem.Error, match="needs 'question' and 'sql'"):
        load_records(tmp_path / "bad.json")
    with pytest.raises(relmem.Error, match="cannot read examples"):
        load_records(tmp_path / "missing.json")


def test_memories_save_and_load(demo_dir, tmp_path):
    catalog = relmem.Catalog(str(demo_dir))
    built = Memories.build(catalog, encoder="hashing", descriptions={"singers": "Singers and concerts."},
                           examples=[{"term": "LA", "definition": "Los Angeles"}])
    built.save(tmp_path / "memory")
    loaded = Memories.load(tmp_path / "memory")
    question = "Which singers are older than 40?"
    assert [m.database for m in loaded.selection.select(question, 3)] == \
        [m.database for m in built.selection.select(question, 3)]
    assert loaded.values.databases == built.values.databases and len(loaded.examples) == 1
    assert loaded.descriptions == {"singers": "Singers and concerts."}
    loaded.check_catalog(catalog)
    smaller = relmem.Catalog(str(demo_dir / "singers"))
    Memories.build(smaller, encoder="hashing", values=False).save(tmp_path / "small")
    with pytest.raises(relmem.Error, match="does not cover 6 database"):
        Memories.load(tmp_path / "small").check_catalog(catalog)
    with pytest.raises(relmem.Error, match="relmem index"):
        Memories.load(tmp_path / "nothing")


def test_tables_and_readable_trace():
    assert format_table(["name", "n"], [["LA", 3], [None, 10], [b"\x00\x01", 1]], max_rows=2).splitlines() == [
        "name | n", "-----+---", "LA   | 3", "NULL | 10", "... 1 more rows"]
    state = State("q")
    with state.trace.step("plan") as step:
        step.decide(targets=[{"sql": "SELECT " + "x, " * 60 + "y"}])
    with pytest.raises(ValueError):
        with state.trace.step("execute") as step:
            raise ValueError("boom")
    text = format_trace(state.trace.records, width=40)
    assert "- plan (" in text and "..." in text and "error: ValueError: boom" in text
    assert json.loads(json.dumps(state.to_dict()))["trace"][1]["error"] == "ValueError: boom"
