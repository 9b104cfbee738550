"""`relmem bench context` on the demo collection: schema-linking recall, literals and tokens next to full DDL."""
import argparse
import json

import pytest

import relmem
from relmem import Error
from relmem.bench import context

QUESTIONS = [
    {"question": "What is the average rating of Italian restaurants in LA?", "db_id": "restaurants",
     "query": "SELECT avg(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"},
    {"question": "How many doctors work at each hospital?", "db_id": "hospitals",
     "query": "SELECT T1.name, count(*) FROM hospital AS T1 JOIN doctor AS T2 ON T1.id = T2.hospital_id "
              "GROUP BY T1.id"},
    {"question": "Which singers from Canada are older than 30?", "db_id": "singers",
     "query": "SELECT name FROM singer WHERE country = 'Canada' AND age > 30"},
]


def bench(tmp_path, dbs, questions, *options):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(questions))
    parser = argparse.ArgumentParser()
    context.add_arguments(parser)
    return context.run(parser.parse_args(["--dbs", str(dbs), "--questions", str(path), "--no-progress",
                                          "--encoder", "hashing:1024", *options]))


def test_demo_collection_report(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS, "--top-k", "3", "--row-cap", "20")
    assert out["benchmark"] == "context" and out["databases"] == 7 and out["evaluated"] == 3
    assert out["row_memory"]["rows_per_table_cap"] == 20 and out["rows_build_seconds"] >= 0
    assert out["full_ddl"]["all"]["table_recall"] == out["gold_db_in_candidates"]  # all of each candidate's tables
    for scope in ("given_gold_db", "all"):
        for key in ("table_recall", "column_recall"):
            assert 0.0 <= out["built"][scope][key] <= 1.0
    assert out["literals"]["questions_with_literals"] == 2 and out["literals"]["literals"] == 3
    tokens = out["tokens"]
    assert tokens["built"]["median"] > 0 and tokens["full_ddl"]["median"] > 0 and tokens["median_ratio"] > 0
    assert tokens["built_prompt"]["median"] > tokens["built"]["median"]
    assert out["ms_per_question"]["median"] > 0 and out["cpu_ms_per_question"]["p95"] >= 0
    assert "tuning" not in out and out["table_margin"] == 0.45


def test_margins_are_tuned_on_other_questions(tmp_path, demo_dir):
    tuning = tmp_path / "tuning.json"
    tuning.write_text(json.dumps(QUESTIONS[1:] * 3))
    out = bench(tmp_path, demo_dir, QUESTIONS[:1], "--tune-questions", str(tuning), "--tune-limit", "4",
                "--tune-max-ratio", "1.0", "--parent-margin", "0.6")
    report = out["tuning"]
    assert report["questions"] == str(tuning) and report["evaluated"] == 4 and report["max_ratio"] == 1.0
    assert [row["table_margin"] for row in report["grid"]] == list(context.TUNING_GRID["table_margin"])
    assert all("parent_margin" not in row for row in report["grid"])  # given on the command line: not tuned
    assert report["chosen"] == {"table_margin": out["table_margin"]} and out["parent_margin"] == 0.6
    best = max((row["table_recall"] + row["column_recall"]) / 2 for row in report["grid"])
    chosen = next(row for row in report["grid"] if row["table_margin"] == out["table_margin"])
    assert (chosen["table_recall"] + chosen["column_recall"]) / 2 == best
    assert out["evaluated"] == 1  # the reported questions are not the tuning ones
    with pytest.raises(Error, match="no setting of the tuning grid"):
        bench(tmp_path, demo_dir, QUESTIONS[:1], "--tune-questions", str(tuning), "--tune-max-ratio", "0.0")


def test_spread_takes_questions_across_the_file():
    assert context.evenly(list(range(10)), 3) == [0, 3, 6]
    assert context.evenly(list(range(3)), 10) == [0, 1, 2]


def test_bad_questions_file(tmp_path, demo_dir):
    with pytest.raises(Error, match=r"expected a JSON list of \{question, db_id, query\}"):
        bench(tmp_path, demo_dir, [{"question": "no gold"}])


def test_gold_tables_columns_and_literals(demo_dir):
    catalog = relmem.Catalog(str(demo_dir))
    tables, columns, literals = context.gold_schema(catalog, "hospitals", QUESTIONS[1]["query"])
    assert tables == ["hospital", "doctor"]
    assert columns == {("hospital", "name"), ("hospital", "id"), ("doctor", "id"), ("doctor", "name"),
                       ("doctor", "hospital_id")}  # names both tables have count for both
    assert context.gold_schema(catalog, "restaurants", QUESTIONS[0]["query"])[2] == ["Italian", "LA"]
