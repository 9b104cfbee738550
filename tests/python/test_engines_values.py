"""The value memory on server databases, on the PostgreSQL and MariaDB servers of tests/python/engine_fixtures.py:
literals are checked and corrected as the engine compares them, and the corrected SQL returns rows on the server."""
import pytest
from engine_fixtures import catalog, server  # noqa: F401 (fixtures)
from engine_servers import admin_arguments, grant_reader

from relmem.engines import open_catalog
from relmem.values import ValueMemory


@pytest.fixture(scope="module")
def values(catalog):
    return ValueMemory.build(catalog, encoder="hashing")


def statuses(values, catalog, db, sql):
    checks, feedback = values.check_values(sql, db, catalog)
    return [c.status for c in checks], feedback


def test_a_case_only_difference_is_corrected_where_the_engine_compares_case(server, catalog, values):
    sql = "SELECT Name FROM country WHERE Continent = 'europe'"
    corrected = values.correct_values(sql, "world_1", catalog)
    if server.engine == "postgresql":
        assert statuses(values, catalog, "world_1", sql)[0] == ["found_ignoring_case"]
        assert catalog.execute("world_1", sql).rows == []
        assert corrected.sql == "SELECT Name FROM country WHERE Continent = 'Europe'"
    else:
        assert statuses(values, catalog, "world_1", sql) == (["found"], "")
        assert (corrected.sql, corrected.replacements) == (sql, [])
    assert len(catalog.execute("world_1", corrected.sql).rows) == 46


def test_a_case_only_difference_beside_a_misspelling_keeps_its_spelling_on_mysql(server, catalog, values):
    sql = "SELECT count(*) FROM country WHERE Continent = 'europe' AND Region = 'Westrn Europe'"
    corrected = values.correct_values(sql, "world_1", catalog)
    expected = {"postgresql": ["Europe", "Western Europe"], "mysql": ["Western Europe"]}[server.engine]
    assert [r.replacement for r in corrected.replacements] == expected
    assert catalog.execute("world_1", corrected.sql).rows[0][0] == 9


def test_a_like_pattern_is_checked_with_the_engines_letter_case(server, catalog, values):
    sql = "SELECT Name FROM country WHERE Name LIKE '%germ%'"
    found, feedback = statuses(values, catalog, "world_1", sql)
    rows = catalog.execute("world_1", sql).rows
    if server.engine == "postgresql":
        assert (found, rows) == (["not_found"], [])
        assert feedback.startswith("Pattern '%germ%' matches nothing in country.Name; similar stored values: 'Germany'")
    else:
        assert (found, feedback, rows) == (["found"], "", [("Germany",)])


def test_dates_and_exact_numbers_are_stored_as_the_engine_compares_them(server, tmp_path):
    if server.engine == "postgresql":
        import psycopg
        with psycopg.connect(server.admin_url + "postgres", autocommit=True) as connection:
            connection.execute("CREATE DATABASE typed_values")
        with psycopg.connect(server.admin_url + "typed_values", autocommit=True) as connection:
            connection.execute("CREATE TABLE sale (id int PRIMARY KEY, day date, at timestamp, amount numeric(8,2), "
                               "city text)")
            connection.execute("INSERT INTO sale VALUES (1, '2020-01-05', '2020-01-05 08:30:00', 12.50, 'Lyon'), "
                               "(2, '2021-03-01', '2021-03-01 17:00:00', 7.00, 'Oslo')")
    else:
        import pymysql
        connection = pymysql.connect(**admin_arguments(server), autocommit=True)
        with connection.cursor() as cursor:
            cursor.execute("CREATE DATABASE typed_values")
            cursor.execute("CREATE TABLE typed_values.sale (id int PRIMARY KEY, day date, at datetime, "
                           "amount decimal(8,2), city varchar(40))")
            cursor.execute("INSERT INTO typed_values.sale VALUES (1, '2020-01-05', '2020-01-05 08:30:00', 12.50, "
                           "'Lyon'), (2, '2021-03-01', '2021-03-01 17:00:00', 7.00, 'Oslo')")
        connection.close()
    grant_reader(server, "typed_values")
    catalog = open_catalog([server.reader_url + "typed_values"], snapshots=str(tmp_path))
    assert sorted(catalog.distinct_values("typed_values", "sale", "day", 5)) == ["2020-01-05", "2021-03-01"]
    assert sorted(catalog.distinct_values("typed_values", "sale", "at", 5)) == ["2020-01-05 08:30:00",
                                                                               "2021-03-01 17:00:00"]
    values = ValueMemory.build(catalog, encoder="hashing")
    for sql in ("SELECT city FROM sale WHERE day = '2020-01-05'",
                "SELECT city FROM sale WHERE at = '2020-01-05 08:30:00'",
                "SELECT city FROM sale WHERE amount = 12.5", "SELECT city FROM sale WHERE amount = 7"):
        assert catalog.execute("typed_values", sql).rows == [("Lyon",) if "7" not in sql else ("Oslo",)], sql
    assert statuses(values, catalog, "typed_values", "SELECT city FROM sale WHERE day = '2020-01-05'")[0] == ["found"]
    catalog.close()
