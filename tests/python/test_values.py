"""The data value memory from Python: lookups, question linking, persistence, the retriever and post-processing."""
import argparse
import json
import os
import pathlib
import sqlite3

import pytest

import relmem
from relmem.bench import values as bench_values
from relmem.values import (ValueLink, ValueMatch, ValueMemory, confidence_model, correct_values,
                           rewrite_string_literals, value_conditions)

from conftest import SPIDER, load_script, requires_shared


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from relmem.demo.collection import build_collection
    folder = tmp_path_factory.mktemp("values-demo")
    build_collection(str(folder))
    catalog = relmem.Catalog(str(folder))
    return catalog, ValueMemory.build(catalog, relmem.HashingEncoder(256), progress=False)


@pytest.mark.parametrize("db, table, column, written, stored", [
    ("restaurants", "restaurant", "city", "Los Angeles", "LA"),
    ("restaurants", "restaurant", "city", "new york city", "NYC"),
    ("employees", "department", "dept_name", "Marketing", "Mktg"),
    ("employees", "department", "dept_name", "Research and Development", "R&D"),
    ("singers", "singer", "gender", "female", "F"),
    ("university", "student", "major", "Computer Science", "CS"),
    ("university", "student", "major", "Mathematics", "MATH"),
    ("flights", "airline", "airline_name", "Untied Airlines", "United Airlines"),
])
def test_lookup_finds_how_the_column_stores_a_value(demo, db, table, column, written, stored):
    _, memory = demo
    found = memory.lookup(db, table, column, written, k=3)
    assert found[0].value == stored
    components = found[0].components
    assert 0 < found[0].score <= 1 and max(components.exact, components.trigram, components.edit, components.token,
                                           components.abbreviation, components.semantic or 0) > 0
    assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)


def test_lookup_of_a_stored_value_is_exact_and_other_columns_are_ranges(demo):
    _, memory = demo
    top = memory.lookup("restaurants", "restaurant", "city", "SF", k=10)[0]
    assert isinstance(top, ValueMatch) and (top.value, top.score, top.table) == ("SF", 1.0, "restaurant")
    assert memory.lookup("restaurants", "restaurant", "rating", "4.5") == []
    rating = memory.column("restaurants", "restaurant", "rating")
    assert rating.kind == "numeric" and 2.5 <= rating.min <= rating.max <= 5.0
    assert memory.column("restaurants", "restaurant", "nope") is None
    with pytest.raises(relmem.Error, match="unknown column"):
        memory.lookup("restaurants", "restaurant", "nope", "x")
    with pytest.raises(relmem.Error, match="not in the value memory"):
        memory.lookup("nope", "restaurant", "city", "x")


def test_link_finds_value_spans_in_a_question(demo):
    _, memory = demo
    question = "Which cafés in Los Angeles serve Italian food?"
    links = memory.link("restaurants", question)
    assert links and all(isinstance(link, ValueLink) for link in links)
    by_value = {link.value: link for link in links}
    assert by_value["LA"].span == "Los Angeles" and by_value["LA"].column == "city"
    assert question[by_value["LA"].start:by_value["LA"].end] == "Los Angeles"  # str offsets, after the 'é'
    assert by_value["Italian"].column == "food_type"
    assert memory.link("restaurants", "How many are there?") == []


def test_save_load_refresh_and_memory_use(demo, tmp_path):
    catalog, memory = demo
    usage = memory.memory_usage
    assert memory.memory_bytes == usage.total_bytes == usage.string_bytes + usage.lexical_bytes + usage.vector_bytes > 0
    memory.save(tmp_path / "memory")
    loaded = ValueMemory.load(tmp_path / "memory")
    assert loaded.encoder.name == "hashing:256" and loaded.databases == memory.databases
    assert loaded.lookup("restaurants", "restaurant", "city", "Los Angeles")[0].value == "LA"
    assert loaded.refresh(catalog, progress=False) == relmem.RefreshReport(unchanged=len(memory.databases))
    with pytest.raises(relmem.Error, match="built with encoder"):
        ValueMemory.load(tmp_path / "memory", relmem.HashingEncoder(64))
    with pytest.raises(relmem.Error, match="manifest.json"):
        ValueMemory.load(tmp_path / "missing")
    with pytest.raises(TypeError):
        ValueMemory.build(catalog, encoder=42)


def test_refresh_reindexes_only_the_changed_file(tmp_path, concert_db):
    catalog = relmem.Catalog(str(concert_db))
    calls = []
    memory = ValueMemory(relmem._relmem.values.ValueMemory.build(
        catalog, relmem.HashingEncoder(64), progress=lambda db, done, total: calls.append((db, done, total))))
    assert calls == [("concert", 1, 1)]
    db = sqlite3.connect(concert_db)
    db.execute("INSERT INTO stadium VALUES (3, 'Hampden Park', 'Glasgow', 52000)")
    db.commit()
    db.close()
    os.utime(concert_db, ns=(1, 1))  # a different modification time, whatever the clock's resolution
    assert memory.refresh(relmem.Catalog(str(concert_db)), progress=True).updated == ["concert"]
    assert memory.lookup("concert", "stadium", "city", "glasgow")[0].value == "Glasgow"


def test_retriever_feedback_and_post_processing(demo):
    catalog, memory = demo
    sql = "SELECT count(*) FROM restaurant WHERE city = 'Los Angeles' AND food_type = 'Italian'"
    checks, feedback = memory.check_values(sql, "restaurants", catalog)
    assert [c.status for c in checks] == ["not_found", "found"]
    assert checks[0].similar[0].value == "LA"
    assert feedback.startswith("Value 'Los Angeles' not found in restaurant.city; similar stored values: 'LA'")

    fixed = correct_values(sql, "restaurants", memory, catalog)
    assert fixed.sql == sql.replace("'Los Angeles'", "'LA'")
    assert [(r.value, r.replacement, r.reason) for r in fixed.replacements] == [("Los Angeles", "LA",
                                                                                            "similar")]
    assert catalog.execute("restaurants", fixed.sql).rows[0][0] > 0

    for untouched in ("SELECT * FROM restaurant WHERE city = 'SF'",          # stored
                      "SELECT * FROM restaurant WHERE city = 'Paris'",       # nothing like it
                      "SELECT * FROM restaurant WHERE name LIKE '%Gold%'"):  # patterns are only checked
        assert correct_values(untouched, "restaurants", memory, catalog).sql == untouched
    assert correct_values(sql, "restaurants", memory, catalog, min_score=0.999).replacements == []
    with pytest.raises(relmem.Error):
        memory.correct_values("SELECT FROM WHERE", "restaurants", catalog)


def test_a_literal_compared_with_a_foreign_key_becomes_a_lookup_of_the_keys(demo):
    catalog, memory = demo
    sql = "SELECT count(*) FROM flight WHERE destination = 'Los Angeles' AND source != 'Chicago'"
    fixed = correct_values(sql, "flights", memory, catalog)
    assert fixed.sql == ("SELECT count(*) FROM flight WHERE destination IN (SELECT \"code\" FROM \"airport\" "
                         "WHERE \"city\" = 'Los Angeles') AND source NOT IN (SELECT \"code\" FROM \"airport\" "
                         "WHERE \"city\" = 'Chicago')")
    assert [(k.value, k.column, k.lookup_table, k.key, k.lookup_column) for k in fixed.lookups] == [
        ("Los Angeles", "destination", "airport", "code", "city"), ("Chicago", "source", "airport", "code", "city")]
    assert fixed.replacements == []
    joined = ("SELECT count(*) FROM flight AS f JOIN airport AS d ON f.destination = d.code JOIN airport AS s "
              "ON f.source = s.code WHERE d.city = 'Los Angeles' AND s.city != 'Chicago'")
    assert catalog.execute("flights", fixed.sql).rows == catalog.execute("flights", joined).rows
    assert catalog.execute("flights", joined).rows[0][0] > 0


def test_conditions_and_literal_rewriting(demo):
    catalog, _ = demo
    sql = 'SELECT name FROM restaurant AS r WHERE r.city = "Los Angeles" OR city IN (\'SF\', \'NYC\')'
    conditions = value_conditions(sql, catalog.schema("restaurants"))
    assert [(c.table, c.column, c.op, c.value) for c in conditions] == [
        ("restaurant", "city", "=", "Los Angeles"), ("restaurant", "city", "IN", "SF"),
        ("restaurant", "city", "IN", "NYC")]
    assert sql[conditions[0].start:conditions[0].end] == '"Los Angeles"'
    rewritten = rewrite_string_literals(sql, {conditions[0].literal_index: "LA"})
    assert rewritten == sql.replace('"Los Angeles"', "'LA'")


def test_perturbations_are_deterministic_and_change_the_value():
    maker = load_script("make_value_cases")
    import random
    examples = {"expansion": "LA Lakers", "synonym": "Film"}
    for category, perturb in maker.PERTURBATIONS.items():
        value = examples.get(category, "Los Angeles Lakers")
        a, b = perturb(value, random.Random(1)), perturb(value, random.Random(1))
        assert a == b and a and a != value, category
    assert maker.perturb_abbreviation("Los Angeles", random.Random(0)) == "LA"
    assert maker.perturb_expansion("F", random.Random(0)) == "female"
    assert maker.perturb_dropped_token("San Jose", random.Random(0)) is None


@requires_shared(SPIDER)
def test_spider_cases_and_benchmark(tmp_path):
    maker = load_script("make_value_cases")
    databases = SPIDER / "database"
    catalog = relmem.Catalog([str(databases / name / f"{name}.sqlite") for name in ("concert_singer", "theme_gallery",
                                                                                    "allergy_1", "car_1")])
    cases = maker.make_cases(catalog, str(SPIDER), per_category=0)
    assert {c["category"] for c in cases} >= {"case", "typo", "unchanged", "absent"}
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))

    memory = ValueMemory.build(catalog, relmem.HashingEncoder(256), progress=False)
    rows = bench_values.evaluate(memory, catalog, bench_values.load_cases(path))
    out = bench_values.report(rows)
    assert out["n"] == len(cases) and out["recall@10"] >= 0.9 and out["ex_after"] > out["ex_before"]
    assert out["by_category"]["unchanged"]["ex_after"] == out["by_category"]["unchanged"]["ex_before"] == 1.0
    assert out["gold_runs"] == 1.0 and out["ex_after_where_gold_runs"] == out["ex_after"]

    assert {c["fold"] for c in cases} <= {"tune", "heldout"}
    for db in {c["db_id"] for c in cases}:  # the fold splits databases, not cases
        assert len({c["fold"] for c in cases if c["db_id"] == db}) == 1
        assert maker.database_fold(0, db) == maker.database_fold(0, db)
    heldout = bench_values.load_cases(path, fold="heldout")
    assert all(c["fold"] == "heldout" for c in heldout) and len(heldout) < len(cases)

    args = argparse.Namespace(dbs=str(tmp_path / "dbs"), cases=str(path), encoder="hashing:64", k=10,
                              min_confidence=None, min_score=None, min_margin=None, max_vectors_per_column=None,
                              split=None, fold=None, limit=5, memory=None)
    (tmp_path / "dbs").mkdir()
    for name in ("concert_singer", "pets_1"):
        (tmp_path / "dbs" / f"{name}.sqlite").symlink_to(databases / name / f"{name}.sqlite")
    report = bench_values.run(args)
    assert report["databases"] == 2 and report["build_seconds"] > 0 and report["thresholds"]["min_confidence"] == \
        confidence_model("hashing:64")["threshold"]
    assert report["n"] <= 5 and {"recall@1", "recall@10", "ex_before", "ex_after", "by_category", "ms_per_case"} <= \
        set(report)


def test_absent_values_that_write_a_stored_value_are_not_absent(tmp_path):
    """make_value_cases' labelling rule: a literal that folds to a stored value (case, accents, punctuation,
    spacing) or that the database's own code table gives as a stored code's name is not an absent value."""
    import sqlite3
    maker = load_script("make_value_cases")
    assert maker.folded("Köhler") == maker.folded("kohler") == maker.folded("KOH-LER")
    assert maker.folded("Kohler") != maker.folded("Koehler")
    path = tmp_path / "docs.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE Ref_Types (type_code TEXT PRIMARY KEY, type_name TEXT);
            CREATE TABLE Documents (id INTEGER, type_code TEXT REFERENCES Ref_Types(type_code), author TEXT);
            INSERT INTO Ref_Types VALUES ('PR', 'Paper'), ('BK', 'Book'), ('XX', 'Poster');
            INSERT INTO Documents VALUES (1, 'PR', 'Köhler'), (2, 'BK', 'Smith');
        """)
    catalog = relmem.Catalog([str(path)])
    written = lambda column, literal: maker.stored_as_written(catalog, "docs", "Documents", column, literal)
    assert written("author", "Kohler") and written("author", "SMITH")
    assert not written("author", "Jones")
    assert written("type_code", "Paper") and written("type_code", "book")  # the code table names the stored code
    assert not written("type_code", "Poster")  # named there, but its code is not stored in Documents
    assert not written("type_code", "Review")
    assert maker.linked_columns(catalog.schema("docs"), "Documents", "type_code") == [("Ref_Types", "type_code")]
