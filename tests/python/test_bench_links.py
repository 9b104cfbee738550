"""`relmem bench links` on the demo collection: links per question and gold literals named, by channel."""
import argparse
import json

import pytest

from relmem import Error
from relmem.bench import links

QUESTIONS = [
    {"question": "What is the average rating of Italian restaurants in Los Angeles?", "db_id": "restaurants",
     "query": "SELECT avg(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"},
    {"question": "List flights from Los Angeles to New York cheaper than 300 dollars.", "db_id": "flights",
     "query": "SELECT * FROM flight WHERE price < 300"},
    {"question": "How many doctors are there?", "db_id": "not_a_database", "query": "SELECT count(*) FROM doctor"},
]


def bench(tmp_path, dbs, questions, *options):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(questions))
    parser = argparse.ArgumentParser()
    links.add_arguments(parser)
    return links.run(parser.parse_args(["--dbs", str(dbs), "--questions", str(path), "--encoder", "hashing:1024",
                                        *options]))


def test_demo_collection_report(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS)
    assert out["benchmark"] == "links" and out["databases"] == 2 and out["questions"] == 2  # the unknown one dropped
    assert out["literals"] == 2 and out["literals_linked"] == 1.0  # 'Italian' exactly, 'LA' by initials
    assert out["by_channel"]["exact:gold"] == 1 and out["by_channel"]["abbreviation:gold"] == 1
    assert out["links_per_question"] == sum(out["by_channel"].values()) / 2
    assert out["ms_per_question"] > 0 and out["skipped_unparsed"] == 0
    assert bench(tmp_path, demo_dir, QUESTIONS, "--every", "2")["questions"] == 1


def test_bad_questions_file(tmp_path, demo_dir):
    with pytest.raises(Error, match="expected a JSON list"):
        bench(tmp_path, demo_dir, {"question": "not a list"})
