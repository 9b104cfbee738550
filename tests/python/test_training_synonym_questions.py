"""training/synonym_questions.py: training questions plus their WordNet synonym versions."""
import importlib.util
import json
import pathlib

import pytest

from relmem import Catalog
from relmem._relmem import WordNet

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "training" / "synonym_questions.py"
QUESTIONS = [
    {"question": "What is the average salary of the employees of each department?", "db_id": "employees"},
    {"question": "Which singers gave concerts at each venue?", "db_id": "singers"},
    {"question": "How many doctors work at hospitals in Boston, and how large is its population?",
     "db_ids": ["hospitals", "world_cities"]},
]


def load_script():
    spec = importlib.util.spec_from_file_location("synonym_questions_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not WordNet.available(), reason="WordNet is not installed")
def test_questions_come_first_then_their_synonym_versions(tmp_path, demo_dir):
    script = load_script()
    data, out = tmp_path / "questions.json", tmp_path / "out.json"
    data.write_text(json.dumps(QUESTIONS))
    script.main(["--data", str(data), "--dbs", str(demo_dir), "--out", str(out)])
    written = json.loads(out.read_text())
    assert written[:3] == QUESTIONS
    versions = written[3:]
    assert versions and all(v["question"] not in {q["question"] for q in QUESTIONS} for v in versions)
    assert {v["db_id"] for v in versions} <= {"employees", "singers"}  # single-database questions only
    questions = [(q["question"], [q["db_id"]] if "db_id" in q else q["db_ids"]) for q in QUESTIONS]
    assert script.augmented(questions, Catalog(str(demo_dir)), 0, share=0.0) == QUESTIONS
    with pytest.raises(SystemExit):
        script.main(["--data", str(data), "--dbs", str(demo_dir), "--out", str(out), "--share", "2"])
