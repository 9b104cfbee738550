import json
import sqlite3
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "spider_texts.py"


def test_questions_come_first_then_distinct_text_cells(tmp_path):
    (tmp_path / "dev.json").write_text(json.dumps([{"question": "How many  singers?"}, {"question": "Who won?"}]))
    (tmp_path / "database" / "music").mkdir(parents=True)
    con = sqlite3.connect(tmp_path / "database" / "music" / "music.sqlite")
    con.execute("create table singer (name text, age int)")
    con.executemany("insert into singer values (?, ?)", [("Joe Sharp", 52), ("Joe Sharp", 40), ("Al", 3), ("Who won?", 1)])
    con.commit()
    con.close()
    out = tmp_path / "texts.txt"
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # Spaces collapsed, duplicates and texts under 3 characters left out, numbers ignored.
    assert out.read_text().splitlines() == ["How many singers?", "Who won?", "Joe Sharp"]
    first = tmp_path / "first.txt"
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(first), "--limit", "1"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and first.read_text().splitlines() == ["How many singers?"]
    # An existing file is never written over.
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(out), "--limit", "1"], capture_output=True,
                          text=True)
    assert done.returncode != 0 and "exists" in done.stderr
    assert out.read_text().splitlines() == ["How many singers?", "Who won?", "Joe Sharp"]
