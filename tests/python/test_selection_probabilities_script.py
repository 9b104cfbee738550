"""scripts/selection_probabilities.py's split of Spider questions into those clear by the schema and the rest."""
import sqlite3

import pytest

from conftest import load_script

import relmem

probabilities = load_script("selection_probabilities")


def make_db(folder, name, script):
    (folder / name).mkdir()
    db = sqlite3.connect(folder / name / f"{name}.sqlite")
    db.executescript(script)
    db.close()


def test_a_question_is_clear_when_no_other_database_has_what_its_sql_names(tmp_path):
    make_db(tmp_path, "concerts", "CREATE TABLE singer (singer_id INT, name TEXT, age INT);"
                                  "CREATE TABLE concert (concert_id INT, singer_id INT, year INT);")
    make_db(tmp_path, "music", "CREATE TABLE singer (singer_id INT, name TEXT, genre TEXT);")
    catalog = relmem.Catalog(str(tmp_path))
    entries = [
        {"db_id": "concerts", "query": "SELECT count(*) FROM singer"},  # music has a singer table too
        {"db_id": "concerts", "query": "SELECT name FROM singer WHERE age > 30"},  # music has no age
        {"db_id": "concerts", "query": 'SELECT name FROM singer WHERE name = "Joe"'},  # "Joe" is a string
        {"db_id": "concerts", "query": "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 "
                                       "ON T1.singer_id = T2.singer_id WHERE T2.year = 2014"},
        {"db_id": "music", "query": "SELECT genre FROM singer"},
        {"db_id": "music", "query": "SELECT name FROM Singer"},  # names compare lower-cased
    ]
    assert probabilities.clear_questions(entries, catalog) == [False, True, False, True, True, False]


def test_expected_calibration_error_weighs_each_bins_gap_by_its_size():
    assert probabilities.expected_calibration_error([(0.9, True), (0.9, True)]) == pytest.approx(0.1)
    # Bin 0.9: p 0.95 and 0.9 against 1 of 2 right (gap 0.425); bin 0.2: p 0.2, wrong (gap 0.2).
    assert probabilities.expected_calibration_error([(0.95, True), (0.9, False), (0.2, False)]) == \
        pytest.approx((2 * 0.425 + 0.2) / 3)
    assert probabilities.expected_calibration_error([(1.0, True)]) == pytest.approx(0.0)
