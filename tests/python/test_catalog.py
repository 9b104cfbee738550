import hashlib

import pytest

import relmem


def test_schema_card_ddl(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    assert catalog.databases == ["concert"]
    assert "concert" in catalog and len(catalog) == 1
    schema = catalog.schema("concert")
    assert [t.name for t in schema.tables] == ["stadium", "concert"]
    stadium = schema.table("stadium")
    assert stadium.row_count == 2
    assert stadium.column("stadium_id").primary_key
    fk = schema.table("concert").foreign_keys[0]
    assert (fk.from_column, fk.to_table, fk.to_column) == ("stadium_id", "stadium", "stadium_id")
    assert "city text [e.g. LA, SF]" in catalog.card("concert")
    assert "desc here" in catalog.card("concert", description="desc here")
    assert 'CREATE TABLE "stadium"' in catalog.ddl("concert")
    assert catalog.distinct_values("concert", "stadium", "city") == ["LA", "SF"]


def test_execute_returns_rows_and_errors(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    result = catalog.execute("concert", "SELECT name, capacity FROM stadium ORDER BY capacity DESC")
    assert result.ok and result.error is None
    assert result.columns == ["name", "capacity"]
    assert result.rows == [("Ayr United", 11998), ("Raith Rovers", 10104)]
    bad = catalog.execute("concert", "SELECT nope FROM stadium")
    assert not bad.ok and bad.error_kind == "prepare" and "no such column" in bad.error
    with pytest.raises(relmem.SqlError, match="no such column"):
        bad.raise_for_error()


ONLY_ONE = "only one SELECT or WITH ... SELECT statement may run"


@pytest.mark.parametrize("sql, reason", [
    ("DROP TABLE stadium", f"{ONLY_ONE}, not DROP"),
    ("INSERT INTO stadium VALUES (3, 'x', 'y', 1)", f"{ONLY_ONE}, not INSERT"),
    ("UPDATE stadium SET capacity = 0", f"{ONLY_ONE}, not UPDATE"),
    ("ATTACH DATABASE ':memory:' AS other", f"{ONLY_ONE}, not ATTACH"),
    ("PRAGMA writable_schema = 1", f"{ONLY_ONE}, not PRAGMA"),
    ("SELECT load_extension('x')", "may only read data, and this one calls load_extension()"),
    ("SELECT 1; DELETE FROM stadium", "holds more than one"),
    # what the pipeline's former regex gate refused: the executor is the only gate now
    ("DROP TABLE restaurant", f"{ONLY_ONE}, not DROP"), ("delete from t", f"{ONLY_ONE}, not DELETE"),
    ("WITH a AS (SELECT 1) DELETE FROM t", f"{ONLY_ONE}, not DELETE"), ("SELECT 1; DROP TABLE t", "more than one"),
    ("ATTACH 'x.db' AS x", f"{ONLY_ONE}, not ATTACH"), ("", "the SQL is empty"), (" ; ", "the SQL is empty"),
])
def test_writes_are_refused_saying_what_and_file_unchanged(concert_db, sql, reason):
    before = hashlib.sha256(concert_db.read_bytes()).hexdigest()
    result = relmem.Catalog(str(concert_db)).execute("concert", sql)
    assert result.error_kind == "refused", result.error
    assert reason in result.error and "not authorized" not in result.error
    with pytest.raises(relmem.SqlError) as raised:
        result.raise_for_error()
    assert str(raised.value) == f"refused: {result.error}"
    assert hashlib.sha256(concert_db.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("sql", [
    "SELECT 1", "select replace(name, 'a', 'b') from stadium;", "  -- note\n SELECT ';' AS x",
    "WITH a AS (SELECT 1) SELECT * FROM a", "WITH a(x) AS (SELECT 1), b AS (SELECT 2) SELECT * FROM a, b",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT x FROM c",
])
def test_single_selects_run(concert_db, sql):
    result = relmem.Catalog(str(concert_db)).execute("concert", sql)
    assert result.ok, result.error


def test_timeout_and_row_cap(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    assert catalog.execute("concert", runaway, timeout=0.2).error_kind == "timeout"
    capped = catalog.execute("concert", "SELECT * FROM stadium", max_rows=1)
    assert len(capped.rows) == 1 and capped.truncated


def test_bad_input_gives_clear_errors(tmp_path, concert_db):
    with pytest.raises(relmem.Error, match="no such file or folder"):
        relmem.Catalog(str(tmp_path / "missing"))
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    with pytest.raises(relmem.Error, match="not a readable SQLite database"):
        relmem.Catalog(str(junk))
    catalog = relmem.Catalog(str(tmp_path))  # the folder scan keeps the good file and reports the bad one
    assert catalog.databases == ["concert"]
    assert [p for p, _ in catalog.skipped] == [str(junk)]
    with pytest.raises(relmem.Error, match="unknown database"):
        catalog.schema("nope")
    assert catalog.execute("concert", "").error_kind == "refused"
    huge = catalog.execute("concert", "SELECT printf('%.*c', 3000000, 'x')")
    assert len(huge.rows[0][0]) == 3_000_000


def test_invalid_utf8_text_is_replaced_not_fatal(tmp_path):
    import sqlite3
    path = tmp_path / "bytes.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (v TEXT)")
    db.execute("INSERT INTO t VALUES (CAST(x'ff61' AS TEXT))")
    db.commit()
    db.close()
    rows = relmem.Catalog(str(path)).execute("bytes", "SELECT v FROM t").rows
    assert rows == [("\ufffda",)]
