"""The row memory: capped rows per table, per-table search, save/load errors, refresh reading changed rows."""
import os
import sqlite3

import pytest

import relmem
from relmem.rows import RowMemory


@pytest.fixture
def folder(tmp_path, concert_db):
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    os.rename(concert_db, dbs / "concert.sqlite")
    return dbs


def test_rows_are_capped_per_table_and_found_by_their_values(folder):
    db = sqlite3.connect(folder / "concert.sqlite")
    db.executemany("INSERT INTO stadium VALUES (?, ?, ?, ?)", [(i, f"Arena {i}", "NYC", i) for i in range(3, 40)])
    db.execute("INSERT INTO stadium VALUES (40, 'Hampden Park', 'Glasgow', 52000)")
    db.commit()
    db.close()
    rows = RowMemory.build(relmem.Catalog(str(folder)), rows_per_table=10)
    assert len(rows.indexes["concert"]) == 10 + 2  # 10 of the 40 stadiums, both concerts
    found = rows.search("concert", "concerts at the Ayr United stadium", ["stadium", "concert"], k=1)
    assert found["stadium"][0].as_dict()["name"] == "Ayr United"
    assert found["stadium"][0].columns == ("stadium_id", "name", "city", "capacity")
    assert len(found["concert"]) == 1
    with pytest.raises(relmem.Error, match="unknown table 'nope'"):
        rows.search("concert", "x", ["nope"])
    with pytest.raises(relmem.Error, match="unknown database"):
        rows.search("zoo", "x", ["stadium"])
    with pytest.raises(relmem.Error, match="rows_per_table"):
        RowMemory.build(relmem.Catalog(str(folder)), rows_per_table=0)


def test_load_refuses_missing_or_foreign_folders(tmp_path, folder):
    with pytest.raises(relmem.Error, match="cannot read row memory"):
        RowMemory.load(str(tmp_path / "nothing"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "rows.json").write_text("{not json")
    with pytest.raises(relmem.Error, match="not valid JSON"):
        RowMemory.load(str(tmp_path / "bad"))
    rows = RowMemory.build(relmem.Catalog(str(folder)))
    rows.save(str(tmp_path / "saved"))
    with pytest.raises(relmem.Error, match="embedded with hashing:512"):
        RowMemory.load(str(tmp_path / "saved"), encoder=relmem.HashingEncoder(64))


def test_refresh_reads_the_new_rows_of_a_changed_database(folder):
    catalog = relmem.Catalog(str(folder))
    rows = RowMemory.build(catalog)
    db = sqlite3.connect(folder / "concert.sqlite")
    db.execute("INSERT INTO stadium VALUES (3, 'Hampden Park', 'Glasgow', 52000)")
    db.commit()
    db.close()
    os.utime(folder / "concert.sqlite", ns=(1, 1))
    assert rows.refresh(relmem.Catalog(str(folder))).updated == ["concert"]
    best = rows.search("concert", "Hampden Park in Glasgow", ["stadium"], k=1)["stadium"][0]
    assert best.as_dict()["city"] == "Glasgow"
