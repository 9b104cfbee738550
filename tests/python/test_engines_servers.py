"""PostgreSQL and MariaDB as engines, on real servers started for the session with the 20 Spider dev databases:
introspection against the SQLite originals, memories built and refreshed from servers, the executor's caps and
error kinds, an adversarial set refused with nothing changed (checked from an admin connection), the engine's own
read-only transaction behind the gate, and the pipeline answering from a server."""
import os
import time
import warnings

import pytest
from engine_fixtures import catalog, server, sqlite_path  # noqa: F401 (fixtures)
from engine_servers import DEV_DBS, admin_arguments, grant_reader

import relmem
from relmem.agent import Memories
from relmem.cli import main as relmem_main
from relmem.engines import EngineCatalog, WritableRoleWarning, open_catalog
from relmem.engines import server as server_module
from relmem.engines.loader import load_sqlite

def admin_state(server, db):
    """Every table of `db` with its row count, and the server-wide things a query could leave behind."""
    if server.engine == "postgresql":
        import psycopg
        with psycopg.connect(server.admin_url + db) as connection:
            tables = [r[0] for r in connection.execute(
                "SELECT relname FROM pg_class WHERE relkind IN ('r', 'S', 'v', 'm') AND relnamespace = "
                "'public'::regnamespace ORDER BY relname")]
            counts = {t: connection.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
            counts["advisory locks"] = connection.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0]
            counts["large objects"] = connection.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0]
            counts["sequence s"] = connection.execute("SELECT last_value FROM s").fetchone()[0]
        return counts
    import pymysql
    connection = pymysql.connect(**admin_arguments(server, db))
    with connection.cursor() as cursor:
        cursor.execute("SHOW TABLES")
        tables = [r[0] for r in cursor.fetchall()]
        counts = {}
        for t in tables:
            cursor.execute(f"SELECT count(*) FROM `{t}`")
            counts[t] = cursor.fetchone()[0]
        cursor.execute("SELECT IS_USED_LOCK('relmem')")
        counts["user lock"] = cursor.fetchone()[0]
    connection.close()
    return counts


def test_introspection_matches_the_sqlite_originals(server, catalog):
    assert catalog.databases == sorted(DEV_DBS)
    for db in DEV_DBS:
        original = relmem.Catalog(sqlite_path(db)).schema(db)
        served = catalog.schema(db)
        assert sorted(t.name for t in served.tables) == sorted(t.name for t in original.tables), db
        for table in original.tables:
            mine = served.table(table.name)
            assert [c.name for c in mine.columns] == [c.name for c in table.columns], (db, table.name)
            assert [c.primary_key for c in mine.columns] == [c.primary_key for c in table.columns], (db, table.name)
            assert mine.row_count == table.row_count, (db, table.name)
            # A reference the data allows as a server key is kept (those to non-unique columns may be dropped).
            assert {(f.from_column, f.to_table) for f in mine.foreign_keys} <= \
                   {(f.from_column, f.to_table) for f in table.foreign_keys}
        assert catalog.engine(db) == server.engine
    assert catalog.distinct_values("world_1", "country", "Continent", 3)[0] == \
        relmem.Catalog(sqlite_path("world_1")).distinct_values("world_1", "country", "Continent", 3)[0]


def test_introspecting_the_twenty_databases_takes_seconds(server, tmp_path):
    start = time.perf_counter()
    opened = open_catalog([server.reader_url], snapshots=str(tmp_path))
    seconds = time.perf_counter() - start
    opened.close()
    print(f"{server.engine}: introspection of {len(opened)} databases in {seconds:.2f} s")
    assert seconds < 30  # about 3 s on a shared 2-core host (docs/engines.md); the bound catches a query per row


def test_the_executor_answers_as_sqlite_does_with_caps_and_error_kinds(catalog):
    sql = "SELECT Name, Population FROM city ORDER BY Population DESC, Name LIMIT 5"
    assert catalog.execute("world_1", sql).rows == relmem.Catalog(sqlite_path("world_1")).execute("world_1", sql).rows
    assert catalog.engine("world_1") in ("postgresql", "mysql")
    capped = catalog.execute("world_1", "SELECT name FROM city", max_rows=7)
    assert (len(capped.rows), capped.truncated) == (7, True)
    assert catalog.execute("world_1", "SELECT count(*) FROM city").rows == [(4079,)]  # the session survived
    too_large = catalog.execute("world_1", "SELECT Name FROM city", max_bytes=1000)
    assert too_large.error_kind == "too_large"
    slow = catalog.execute("world_1", "SELECT count(*) FROM city a, city b, city c", timeout=0.5)
    assert slow.error_kind == "timeout", slow.error
    unknown = catalog.execute("world_1", "SELECT no_such_column FROM city")
    assert unknown.error_kind == "prepare" and "no_such_column" in unknown.error
    with pytest.raises(relmem.SqlError):
        unknown.raise_for_error()


COMMON_ATTACKS = [
    "SELECT 1; DROP TABLE singer", "COMMIT; DELETE FROM singer", "/* a note */ DELETE FROM singer",
    "-- a note\nDROP TABLE singer", "UPDATE singer SET Name = 'x'", "INSERT INTO singer (Singer_ID) VALUES (99)",
    "CREATE TABLE made_here (a int)", "SELECT * INTO made_here FROM singer", "SELECT Name FROM singer FOR UPDATE",
    "TRUNCATE singer", "SET autocommit = 1",
]
ENGINE_ATTACKS = {
    "postgresql": [
        "WITH gone AS (DELETE FROM singer RETURNING *) SELECT count(*) FROM gone",
        "SELECT pg_read_file('/etc/passwd')", "SELECT pg_read_binary_file('/etc/passwd')", "SELECT pg_ls_dir('.')",
        "SELECT pg_stat_file('/etc/passwd')", "SELECT lo_import('/etc/passwd')", "SELECT lo_export(1, '/tmp/x')",
        "SELECT dblink_exec('dbname=concert_singer', 'DROP TABLE singer')",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SELECT pg_terminate_backend(pg_backend_pid())", "SELECT pg_cancel_backend(1)",
        "SELECT pg_advisory_lock(42)", "SELECT pg_try_advisory_lock(42)", "SELECT nextval('s')",
        "SELECT setval('s', 100)", "COPY singer TO '/tmp/relmem-copy'", "SELECT pg_sleep(3)",
        "SELECT query_to_xml('DELETE FROM singer', true, true, '')",
    ],
    "mysql": [
        "SELECT * FROM singer INTO OUTFILE '/tmp/relmem-outfile'", "SELECT Name FROM singer INTO DUMPFILE '/tmp/x'",
        "LOAD DATA INFILE '/etc/passwd' INTO TABLE singer", "SELECT LOAD_FILE('/etc/passwd')", "SELECT SLEEP(3)",
        "SELECT BENCHMARK(100000000, MD5('a'))", "SELECT GET_LOCK('relmem', 1)", "SELECT Name INTO @x FROM singer",
    ],
}


def test_the_adversarial_set_is_refused_and_changes_nothing(server, catalog):
    before = admin_state(server, "concert_singer")
    for sql in COMMON_ATTACKS + ENGINE_ATTACKS[server.engine]:
        result = catalog.execute("concert_singer", sql, timeout=2.0)
        assert result.error_kind == "refused", (sql, result)
        assert result.error
    assert admin_state(server, "concert_singer") == before
    assert not os.path.exists("/tmp/relmem-copy") and not os.path.exists("/tmp/relmem-outfile")


def test_the_server_transaction_refuses_writes_the_gate_would_let_through(server, tmp_path, monkeypatch):
    """As the admin role, with the gate out of the way: the server alone stops every write (Postgres already where
    the statement is declared as a cursor, which takes only a query; then the read-only transaction)."""
    import sqlglot
    monkeypatch.setattr(server_module, "check_statement", lambda sql, engine: sqlglot.parse_one("SELECT 1"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WritableRoleWarning)
        admin = EngineCatalog([server.admin_url + "concert_singer"], snapshots=str(tmp_path))
    before = admin_state(server, "concert_singer")
    writes = ["DELETE FROM singer", "UPDATE singer SET Name = 'x'", "CREATE TABLE made_here (a int)",
              "INSERT INTO singer (Singer_ID) VALUES (99)", "DROP TABLE singer_in_concert"]
    queries_that_write = ["SELECT nextval('s')"] if server.engine == "postgresql" else []
    for sql in writes:
        result = admin.execute("concert_singer", sql)
        assert result.error_kind in (("refused", "prepare") if server.engine == "postgresql" else ("refused",)), \
            (sql, result)
    for sql in queries_that_write:
        result = admin.execute("concert_singer", sql)
        assert result.error_kind == "refused" and "read-only transaction" in result.error, (sql, result)
    assert admin_state(server, "concert_singer") == before
    admin.close()


def test_a_role_that_can_write_is_warned_about(server, tmp_path):
    with pytest.warns(WritableRoleWarning, match="can write"):
        admin = open_catalog([server.admin_url + "singer"], snapshots=str(tmp_path))
    assert admin.warnings and "secret" not in admin.warnings[0]
    admin.close()


def test_bad_connections_fail_clearly_and_name_no_password(server, tmp_path):
    wrong = server.reader_url.replace("reader-secret", "wrong-password") + "singer"
    with pytest.raises(relmem.Error, match="cannot connect") as raised:
        open_catalog([wrong], snapshots=str(tmp_path))
    assert "wrong-password" not in str(raised.value)
    with pytest.raises(relmem.Error, match="cannot connect"):
        open_catalog([server.reader_url + "no_such_database"], snapshots=str(tmp_path))
    with pytest.raises(relmem.Error, match="bad database URL"):
        open_catalog([server.reader_url.replace("127.0.0.1:", "127.0.0.1:notaport")], snapshots=str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_memories_build_save_and_refresh_from_a_server(server, tmp_path):
    load_sqlite(sqlite_path("concert_singer"), server.admin_url, name="refresh_probe")
    grant_reader(server, "refresh_probe")
    sources = [server.reader_url + "refresh_probe", server.reader_url + "singer", sqlite_path("pets_1")]
    snapshots = str(tmp_path / "snapshots")
    catalog = open_catalog(sources, snapshots=snapshots)
    assert catalog.engine("pets_1") == "sqlite" and catalog.engine("singer") == server.engine
    memories = Memories.build(catalog, encoder="hashing")
    memories.save(tmp_path / "memory")
    assert memories.selection.select("Which songs did each singer sing, and their sales?", 1)[0].database == "singer"
    assert memories.values.lookup("refresh_probe", "singer", "Country", "france")[0].value == "France"
    catalog.close()

    reopened = open_catalog(sources, snapshots=snapshots)
    loaded = Memories.load(tmp_path / "memory")
    assert loaded.selection.refresh(reopened).unchanged == 3
    reopened.close()
    if server.engine == "postgresql":
        import psycopg
        with psycopg.connect(server.admin_url + "refresh_probe", autocommit=True) as connection:
            connection.execute("ALTER TABLE singer ADD COLUMN nickname text")
    else:
        import pymysql
        connection = pymysql.connect(**admin_arguments(server, "refresh_probe"), autocommit=True)
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE singer ADD COLUMN nickname text")
        connection.close()
    changed = open_catalog(sources, snapshots=snapshots)
    assert "nickname" in [c.name for c in changed.schema("refresh_probe").table("singer").columns]
    report = loaded.selection.refresh(changed)
    assert (report.updated, report.unchanged) == (["refresh_probe"], 2)
    assert loaded.values.refresh(changed).updated == ["refresh_probe"]
    changed.close()


def test_the_command_line_reads_server_urls(server, capsys):
    assert relmem_main(["catalog", server.reader_url + "singer"]) == 0
    assert "singer (2 tables)" in capsys.readouterr().out
    assert relmem_main(["sql", server.reader_url + "singer", "SELECT count(*) FROM singer", "--json"]) == 0
    assert '"rows": [[8]]' in capsys.readouterr().out
    assert relmem_main(["sql", server.reader_url + "singer", "DELETE FROM singer"]) == 1
    assert "refused" in capsys.readouterr().err


def test_the_pipeline_answers_from_the_server_with_the_gold_simulator(server, tmp_path, monkeypatch):
    from relmem.eval import GoldSimulator, Item, Part, make_pipeline, report, run_items
    from relmem.llm import CallableLLM
    sources = [server.reader_url + db for db in ("concert_singer", "singer", "world_1", "pets_1")]
    catalog = open_catalog(sources, snapshots=str(tmp_path / "snapshots"))
    parts = [("How many singers are there?", "concert_singer", "SELECT count(*) FROM singer"),
             ("What is the population of the largest city?", "world_1", "SELECT max(Population) FROM city"),
             ("How many pets are there?", "pets_1", "SELECT count(*) FROM Pets")]
    items = []
    for i, (question, db, sql) in enumerate(parts):
        rows = [list(r) for r in relmem.Catalog(sqlite_path(db)).execute(db, sql).rows]
        items.append(Item(f"single-{i}", "single", question, {"type": "rows"}, [Part(question, db, sql, rows, False)]))
    on_server = []
    execute = EngineCatalog.execute
    monkeypatch.setattr(EngineCatalog, "execute", lambda self, db, sql, **kw: on_server.append(db) or
                        execute(self, db, sql, **kw))
    pipeline = make_pipeline(catalog, Memories.build(catalog, encoder="hashing"),
                             CallableLLM(GoldSimulator(items), name="gold-simulator"))
    out = str(tmp_path / "run.jsonl")
    run_items(pipeline, items, out, {"label": server.engine, "llm": "gold-simulator"}, progress=False)
    groups = report([out])["runs"][0]["groups"]
    assert groups["all"]["execution_accuracy"] == 1.0
    assert {"concert_singer", "world_1", "pets_1"} <= set(on_server)
    catalog.close()


GRAMMAR_QUERIES = {
    "postgresql": ['SELECT "Name" FROM singer WHERE Country ILIKE \'fr%\'', "SELECT Name || ' ' || Country FROM singer",
                   "SELECT STRING_AGG(Name, ',') FROM singer", "SELECT CAST(Age AS NUMERIC) FROM singer",
                   "SELECT STRPOS(Name, 'a') FROM singer"],
    "mysql": ["SELECT `Name` FROM singer", "SELECT CONCAT(Name, ' ', Country) FROM singer",
              "SELECT CAST(Age AS SIGNED) FROM singer", "SELECT Name AS `the name` FROM singer",
              "SELECT GROUP_CONCAT(Name) FROM singer"],
}


def test_queries_of_the_engines_grammar_run_on_it(server, catalog):
    from relmem.contracts import CONTRACTS, write_sql
    from relmem.gbnf import Grammar
    schema = {t.name: [c.name for c in t.columns] for t in catalog.schema("concert_singer").tables}
    grammar = Grammar(CONTRACTS["sql"].grammar(schema=schema, dialect=server.engine))
    for sql in GRAMMAR_QUERIES[server.engine]:
        assert grammar.matches(write_sql(sql)), sql
        assert catalog.execute("concert_singer", sql).ok, (sql, catalog.execute("concert_singer", sql).error)
