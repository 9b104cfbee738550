import json

import pytest

import relmem
import relmem.sql
from conftest import SPIDER, requires_shared


def test_parse_conditions_tables_render(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    sql = ('SELECT T1.name FROM stadium AS T1 JOIN concert AS T2 ON T1.stadium_id = T2.stadium_id '
           'WHERE T2.year = 2014 AND city = "LA"')
    query = relmem.sql.parse(sql, catalog, "concert")
    found = [(c.table, c.column, c.op, c.literal, c.literal_kind) for c in query.conditions]
    assert found == [("concert", "year", "=", "2014", "number"), ("stadium", "city", "=", "LA", "string")]
    city = query.conditions[1]
    assert sql[city.start:city.end] == '"LA"'
    assert sql[city.column_start:city.column_end] == "city"
    assert sql[city.comparison_start:city.comparison_end] == 'city = "LA"'
    assert query.tables == ["stadium", "concert"]
    assert query.render() == ('SELECT T1.name FROM stadium AS T1 JOIN concert AS T2 ON T1.stadium_id = T2.stadium_id '
                              'WHERE T2.year = 2014 AND city = "LA"')
    assert [(l.index, l.kind, l.value) for l in query.literals] == [(0, "number", "2014"), (1, "string", "LA")]
    # Without a schema the unqualified column cannot be placed in one of two tables.
    assert [c.table for c in relmem.sql.parse(sql).conditions] == ["concert", ""]


@pytest.mark.parametrize("sql, counts_only", [
    ("SELECT count(*) FROM singer", True),
    ("SELECT count(*) AS n, COUNT(DISTINCT country) FROM singer GROUP BY age ORDER BY n DESC LIMIT 1", True),
    ("SELECT count(*) FROM singer UNION SELECT name FROM singer", True),  # the first SELECT names the result
    ("SELECT country, count(*) FROM singer GROUP BY country", False),
    ("SELECT count(*) + 1 FROM singer", False),
    ("SELECT sum(age) FROM singer", False),
    ("SELECT name FROM singer WHERE age > (SELECT count(*) FROM concert)", False),
])
def test_counts_only_reads_the_result_columns(sql, counts_only):
    assert relmem.sql.parse(sql).counts_only is counts_only


def test_rewrite_literals_keeps_formatting(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    sql = "SELECT name   FROM stadium\nWHERE city = 'Los Angeles'  -- the city"
    index = relmem.sql.parse(sql).conditions[0].literal_index
    fixed = relmem.sql.rewrite_literals(sql, {index: "LA"})
    assert fixed == "SELECT name   FROM stadium\nWHERE city = 'LA'  -- the city"
    assert catalog.execute("concert", fixed).rows == [("Raith Rovers",)]
    assert relmem.sql.parse(sql).rewrite_literals({0: "O'Hare"}).endswith("city = 'O''Hare'  -- the city")
    assert relmem.sql.rewrite_literals("SELECT 1 + 2", {0: 2.5, 1: None}) == "SELECT 2.5 + NULL"
    assert relmem.sql.rewrite_literals("SELECT 1", {0: 10**30}) == "SELECT " + str(10**30)
    with pytest.raises(relmem.Error, match="no literal with index 3"):
        relmem.sql.rewrite_literals(sql, {3: "x"})
    with pytest.raises(TypeError):
        relmem.sql.rewrite_literals(sql, {0: [1]})


def test_inspect_reports_structured_diagnostics(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    sql = "SELECT nme FROM stadium WHERE capacity = 'big'"
    diagnostics = relmem.sql.inspect(sql, catalog, "concert")
    assert [(d.kind, d.severity) for d in diagnostics] == [("unknown_column", "error"), ("type_mismatch", "warning")]
    assert sql[diagnostics[0].start:diagnostics[0].end] == "nme"
    assert "did you mean 'name'" in diagnostics[0].message
    assert relmem.sql.inspect("SELECT name FROM stadium", catalog.schema("concert")) == []
    assert relmem.sql.parse("SELECT year FROM stadium", catalog, "concert").inspect()[0].kind == "missing_join"
    [syntax] = relmem.sql.inspect("SELECT name FROM", catalog, "concert")
    assert (syntax.kind, syntax.severity, syntax.start) == ("syntax", "error", 16)


def test_repair_qualifiers_moves_a_column_to_the_from_item_that_has_it(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    sql = ("SELECT T2.name  -- the stadium\nFROM stadium AS T1 JOIN concert AS T2 ON T1.stadium_id = T2.stadium_id "
           "WHERE T2.year = 2014")
    repair = relmem.sql.repair_qualifiers(sql, catalog, "concert")
    assert repair.sql == sql.replace("T2.name", "T1.name")
    [fix] = repair.repairs
    assert (fix.column, fix.original, fix.replacement, sql[fix.start:fix.end]) == ("name", "T2", "T1", "T2")
    assert sorted(catalog.execute("concert", repair.sql).rows) == [("Ayr United",), ("Raith Rovers",)]
    unchanged = relmem.sql.repair_qualifiers(repair.sql, catalog.schema("concert"))
    assert unchanged.sql == repair.sql and unchanged.repairs == []
    with pytest.raises(relmem.sql.SqlSyntaxError):
        relmem.sql.repair_qualifiers("SELECT T2.name FROM", catalog, "concert")


def test_repair_joins_adds_the_table_a_foreign_key_links(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    sql = "SELECT concert_name FROM concert WHERE city = 'LA'"
    repair = relmem.sql.repair_joins(sql, catalog, "concert")
    clause = " JOIN stadium ON concert.stadium_id = stadium.stadium_id"
    assert repair.sql == sql.replace(" WHERE", clause + " WHERE")
    [fix] = repair.repairs
    assert (fix.column, fix.table, fix.clause, fix.position) == ("city", "stadium", clause, sql.index(" WHERE"))
    assert catalog.execute("concert", repair.sql).rows == [("Auditions",)]
    assert relmem.sql.repair_joins(repair.sql, catalog.schema("concert")).repairs == []
    with pytest.raises(relmem.sql.SqlSyntaxError):
        relmem.sql.repair_joins("SELECT city FROM", catalog, "concert")


def test_repair_counts_counts_the_rows_that_reference_the_table(concert_db):
    catalog = relmem.Catalog(str(concert_db))
    sql = "SELECT name, stadium_id FROM stadium ORDER BY count(*) DESC"  # SQLite refuses it
    repair = relmem.sql.repair_counts(sql, catalog, "concert")
    clause = " JOIN concert ON stadium.stadium_id = concert.stadium_id"
    assert repair.sql == ("SELECT name, stadium.stadium_id FROM stadium" + clause +
                          " GROUP BY stadium.stadium_id ORDER BY count(*) DESC")
    [fix] = repair.repairs
    assert (fix.table, fix.clause, fix.group_by) == ("concert", clause, " GROUP BY stadium.stadium_id")
    assert sorted(catalog.execute("concert", repair.sql).rows) == [("Ayr United", 2), ("Raith Rovers", 1)]
    assert relmem.sql.repair_counts(repair.sql, catalog.schema("concert")).repairs == []
    with pytest.raises(relmem.sql.SqlSyntaxError):
        relmem.sql.repair_counts("SELECT name FROM stadium ORDER BY", catalog, "concert")


@pytest.mark.parametrize("bad", ["", "SELECT", "SELECT * FROM t WHERE", "DROP TABLE t", "SELECT 'x", "(" * 10000,
                                 "SELECT \x00", "SELECT a FROM t; SELECT b FROM t"])
def test_malformed_sql_raises_a_clear_error(bad):
    with pytest.raises(relmem.sql.SqlSyntaxError, match="SQL syntax error at line") as caught:
        relmem.sql.parse(bad)
    assert isinstance(caught.value, relmem.Error)
    assert 0 <= caught.value.offset <= len(bad)


def test_inspect_without_schema_is_an_error():
    with pytest.raises(relmem.Error, match="schema"):
        relmem.sql.parse("SELECT 1").inspect()


@requires_shared(SPIDER)
def test_spider_dev_gold_parses_and_raises_no_errors():
    catalog = relmem.Catalog(str(SPIDER / "database"))
    items = json.loads((SPIDER / "dev.json").read_text())
    for item in items:
        query = relmem.sql.parse(item["query"], catalog, item["db_id"])
        assert relmem.sql.parse(query.render()).render() == query.render()
        assert [d for d in query.inspect() if d.severity == "error"] == [], item["query"]


SWAN_QUESTIONS = SPIDER.parent / "swan" / "beyond-database-questions"


@requires_shared(SWAN_QUESTIONS)
def test_swan_bird_style_queries_parse_and_render_to_a_fixed_point():
    import csv
    queries = []
    for path in sorted(SWAN_QUESTIONS.glob("*Queries.csv")):
        if "Hybrid" in path.name:  # BlendSQL templates, not SQL
            continue
        for row in csv.reader(path.open(newline="")):
            queries += [row[column] for column in (3, 5) if len(row) > column and row[column].strip()]
    assert len(queries) >= 200
    for sql in queries:
        rendered = relmem.sql.parse(sql).render()
        assert relmem.sql.parse(rendered).render() == rendered, sql
