"""The server engines' static gate and URLs, without a server: what is refused, with the name of what was
refused, and what passes."""
import pytest

import relmem
from relmem.engines import Refused, check_statement, is_server_url, parse_server_url

PASSES = ["SELECT 1", "SELECT 1;", "WITH x AS (SELECT 1 AS a) SELECT a FROM x", "SELECT 1 UNION SELECT 2",
          "/* note */ SELECT name FROM singer WHERE name = 'a;b'", "(SELECT 1)"]
REFUSED = [
    ("postgresql", "SELECT 1; DROP TABLE t", "stacked statements"),
    ("postgresql", "COMMIT; DELETE FROM t", "stacked statements"),
    ("postgresql", "/* c */ DELETE FROM t", "DELETE"),
    ("postgresql", "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "DELETE inside a CTE"),
    ("postgresql", "SELECT * INTO n FROM t", "SELECT ... INTO"),
    ("postgresql", "SELECT pg_catalog.pg_sleep(1)", "pg_sleep"),
    ("postgresql", "SELECT pg_try_advisory_lock(1)", "pg_try_advisory_lock"),
    ("postgresql", "SELECT dblink('x', 'y')", "dblink"),
    ("postgresql", "COPY t TO '/tmp/x'", "COPY"),
    ("postgresql", "SELECT 1 FOR UPDATE", "row lock"),
    ("mysql", "SELECT * FROM t INTO OUTFILE '/tmp/x'", "INTO OUTFILE"),
    ("mysql", "LOAD DATA INFILE 'x' INTO TABLE t", "LOAD DATA"),
    ("mysql", "SELECT BENCHMARK(10, MD5('a'))", "benchmark"),
    ("mysql", "SELECT a INTO @x FROM t", "SELECT ... INTO"),
    ("mysql", "SELECT 1 # c\n; DROP TABLE t", "stacked statements"),
]


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
@pytest.mark.parametrize("sql", PASSES)
def test_single_selects_pass(engine, sql):
    assert check_statement(sql, engine) is not None


@pytest.mark.parametrize("engine,sql,named", REFUSED)
def test_refusals_name_what_was_refused(engine, sql, named):
    with pytest.raises(Refused, match=named.replace("(", r"\(").replace(".", r"\.")):
        check_statement(sql, engine)


def test_urls_are_parsed_and_never_show_their_password():
    url = parse_server_url("postgresql://reader:s%40cret@db.example/sales?schema=crm&sslmode=disable")
    assert (url.engine, url.host, url.port, url.user, url.password, url.database, url.schema, url.options) == (
        "postgresql", "db.example", 5432, "reader", "s@cret", "sales", "crm", (("sslmode", "disable"),))
    assert "cret" not in url.redacted and "cret" not in repr(url)
    assert parse_server_url("mariadb://u@h/shop").port == 3306
    assert is_server_url("mysql://u@h/") and not is_server_url("spider/database")
    for bad in ("mysql://u:pw@h/db?schema=x", "postgresql:///db", "oracle://u@h/db", "mysql://u:pw@h:99999/db"):
        with pytest.raises(relmem.Error) as raised:
            parse_server_url(bad)
        assert "pw" not in str(raised.value).replace("bad database URL", "")


def test_sqlite_alone_needs_neither_sqlglot_nor_the_server_drivers(tmp_path):
    import sqlite3
    import subprocess
    import sys
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE item (name TEXT)")
    code = ("import sys\n"
            "for name in ('sqlglot', 'psycopg', 'pymysql'): sys.modules[name] = None\n"
            "import relmem.cli, relmem.bench.selection, relmem.eval.commands\n"
            "from relmem.engines import open_catalog\n"
            f"print(open_catalog([{str(path)!r}]).databases)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['shop']"
