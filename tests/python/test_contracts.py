"""Output contracts: each stage's form, parser, reminder, writer and grammar agree with one another."""
import json
import random
import re

import pytest
from conftest import SPIDER, requires_shared

import relmem
from relmem.contracts import (CONTRACTS, NO_DATABASE, PROMPT_CONTRACTS, write_answer, write_parts, write_plan,
                              write_rephrase, write_return_type, write_sql, write_verdict)
from relmem.gbnf import Grammar
from relmem.parsers import RETURN_SQL_RESULT, RETURN_TEXT, Target
from relmem.prompt_templates import load_prompt, render_prompt
from relmem.sql_grammar import DEPTH, sql_grammar, sql_rules

SINGERS = {"singer": ["Singer_ID", "Name", "Age", "Country"], "concert": ["concert_ID", "Year", "Singer_ID"]}
FLIGHTS = {"flight": ["flno", "origin", "destination", "price"], "airport name": ["code", "city"]}


def test_every_prompt_shows_its_contracts_form():
    for prompt, contract in PROMPT_CONTRACTS.items():
        template = load_prompt(prompt)
        assert "output_form" in template.slots, prompt
        values = {slot: "x" for slot in template.slots if slot != "output_form"}
        system = render_prompt(prompt, **values)[0]["content"]
        assert CONTRACTS[contract].form in system, prompt


def test_writers_read_back_through_the_parsers():
    plan = write_plan([Target("count singers", "SELECT COUNT(*) FROM singer", "concert_singer"),
                       ("cheap flights", "SELECT flno FROM flight WHERE price < 300", "flight_1")])
    assert CONTRACTS["plan"].parse(plan, known_databases=["concert_singer", "flight_1"]) == [
        Target("count singers", "SELECT COUNT(*) FROM singer", "concert_singer"),
        Target("cheap flights", "SELECT flno FROM flight WHERE price < 300", "flight_1")]
    assert CONTRACTS["plan"].parse(write_plan([])) == []
    assert CONTRACTS["sql"].parse(write_sql("SELECT 1")) == "SELECT 1"
    assert CONTRACTS["verdict"].parse(write_verdict(False)) is False
    assert CONTRACTS["return_type"].parse(write_return_type(RETURN_TEXT)) == RETURN_TEXT
    assert CONTRACTS["return_type"].parse(write_return_type(RETURN_SQL_RESULT)) == RETURN_SQL_RESULT
    assert CONTRACTS["answer"].parse(write_answer("42 singers")) == "42 singers"
    assert CONTRACTS["rephrase"].parse(write_rephrase("How many singers?")) == "How many singers?"
    assert CONTRACTS["parts"].parse(write_parts(["A?", "B?"])) == ["A?", "B?"]


def test_each_grammar_accepts_its_writers_replies():
    assert Grammar(CONTRACTS["verdict"].grammar()).matches(write_verdict(True))
    assert Grammar(CONTRACTS["return_type"].grammar()).matches(write_return_type(RETURN_TEXT))
    assert Grammar(CONTRACTS["answer"].grammar()).matches(write_answer("Paris"))
    assert Grammar(CONTRACTS["rephrase"].grammar()).matches(write_rephrase("How many singers are there?"))
    assert Grammar(CONTRACTS["parts"].grammar()).matches(write_parts(["How many singers?", "Average age?"]))
    sql = Grammar(CONTRACTS["sql"].grammar(schema=SINGERS))
    assert sql.matches(write_sql("SELECT Name FROM singer WHERE Age > 30"))
    assert not sql.matches("SELECT Name FROM singer")  # the form, not only the query
    assert not sql.matches(write_sql("SELECT Name FROM singer WHERE Height > 30"))


def test_the_plan_grammar_ties_each_query_to_its_database():
    grammar = Grammar(CONTRACTS["plan"].grammar(schemas={"concert_singer": SINGERS, "flight_1": FLIGHTS}))
    own = write_plan([("count", "SELECT COUNT(*) FROM singer", "concert_singer"),
                      ("cheap", "SELECT flno FROM flight WHERE price < 300", "flight_1")])
    assert grammar.matches(own)
    assert grammar.matches(NO_DATABASE)
    assert not grammar.matches(write_plan([("count", "SELECT COUNT(*) FROM singer", "flight_1")]))
    assert not grammar.matches(write_plan([("count", "SELECT COUNT(*) FROM singer", "other_db")]))


def test_no_grammar_without_the_schema_it_needs():
    assert CONTRACTS["sql"].grammar() is None
    assert CONTRACTS["plan"].grammar(schemas={}) is None
    assert CONTRACTS["sql"].constraints() == {}
    assert set(CONTRACTS["verdict"].constraints()) == {"grammar"}


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM singer",
    "select count(*) from SINGER where age > 30",
    "SELECT T1.Name, COUNT(*) AS n FROM singer AS T1 JOIN concert AS T2 ON T1.Singer_ID = T2.Singer_ID "
    "GROUP BY T1.Name HAVING COUNT(*) > 1 ORDER BY n DESC LIMIT 3",
    "SELECT Name FROM singer WHERE Singer_ID NOT IN (SELECT Singer_ID FROM concert WHERE Year = 2014)",
    "SELECT Country FROM singer WHERE Age > 40 INTERSECT SELECT Country FROM singer WHERE Age < 30",
    "SELECT AVG(Age), MIN(Age), MAX(Age) FROM singer WHERE Country = 'France'",
    "SELECT Name FROM singer WHERE Name LIKE '%Joe%' AND Age BETWEEN 20 AND 30",
    "SELECT DISTINCT s.Country FROM singer s",
    "SELECT CASE WHEN Age > 30 THEN 'old' ELSE 'young' END FROM singer",
    "SELECT CAST(Age AS REAL) / 2 FROM singer WHERE Country IS NOT NULL;",
    "SELECT \"Name\" FROM \"singer\" WHERE Country = 'O''Brien'",
    "SELECT Name FROM singer WHERE Country = \"France\" OR Name IN (\"Joe \"\"Jr\"\" Smith\", \"Ann\")",
])
def test_the_sql_grammar_accepts_the_dialect(sql):
    assert Grammar(sql_grammar(SINGERS)).matches(sql)


@pytest.mark.parametrize("sql", [
    "SELECT Height FROM singer",                  # no such column
    "SELECT Name FROM singers",                   # no such table
    "DELETE FROM singer",                         # not a query
    "SELECT Name FROM singer; DROP TABLE singer",  # two statements
    "SELECT COUNT(*) FROM concert WHERE Year-of.Year > 2000",  # "of" is no table alias
])
def test_the_sql_grammar_refuses_the_rest(sql):
    assert not Grammar(sql_grammar(SINGERS)).matches(sql)


def test_double_quoted_strings_only_where_the_engine_reads_them_so():
    """SQLite reads a double-quoted text that names no column as a string, as Spider's gold writes values; a
    model that opens a value with a double quote is not forced to finish it as a column name there. PostgreSQL
    and MySQL quote names only with their own mark."""
    query = 'SELECT Name FROM singer WHERE Country = "France"'
    assert Grammar(sql_grammar(SINGERS)).matches(query)
    for dialect in ("postgresql", "mysql"):
        grammar = Grammar(f"root ::= sql-query\n{sql_rules(SINGERS, 'sql', dialect=dialect)}")
        assert not grammar.matches(query) and grammar.matches(query.replace('"', "'"))


def _nested(depth, inner, outer):
    """`inner` wrapped `depth` times by `outer` (a format string with one {})."""
    for _ in range(depth):
        inner = outer.format(inner)
    return inner


@pytest.mark.parametrize("outer, most", [
    ("CAST({} AS REAL)", DEPTH),
    ("ABS({})", DEPTH + 1),  # the deepest level still calls functions on columns and literals
    ("({})", DEPTH),
    ("CASE WHEN {} > 1 THEN 1 ELSE 0 END", DEPTH),
])
def test_the_sql_grammar_bounds_the_nesting_of_expressions(outer, most):
    grammar = Grammar(sql_grammar(SINGERS))
    assert grammar.matches(f"SELECT {_nested(most, 'Age', outer)} FROM singer")
    assert not grammar.matches(f"SELECT {_nested(most + 1, 'Age', outer)} FROM singer")


def test_the_sql_grammar_bounds_the_nesting_of_subqueries():
    grammar = Grammar(sql_grammar(SINGERS))
    inner = "SELECT Singer_ID FROM concert"
    outer = "SELECT Singer_ID FROM singer WHERE Singer_ID IN ({})"
    assert grammar.matches(_nested(DEPTH, inner, outer))
    assert not grammar.matches(_nested(DEPTH + 1, inner, outer))
    assert grammar.matches(_nested(DEPTH, inner, "SELECT * FROM ({}) AS t"))
    assert not grammar.matches(_nested(DEPTH + 1, inner, "SELECT * FROM ({}) AS t"))


def test_names_with_spaces_and_keywords_are_quoted():
    grammar = Grammar(sql_grammar({"airport name": ["code", "order"]}))
    assert grammar.matches('SELECT "order" FROM "airport name"')
    assert not grammar.matches("SELECT order FROM airport name")


def _schemas():
    schemas = {}
    for database in json.loads((SPIDER / "tables.json").read_text()):
        tables = database["table_names_original"]
        schemas[database["db_id"]] = {}
        for table, column in database["column_names_original"]:
            if table >= 0:
                schemas[database["db_id"]].setdefault(tables[table], []).append(column)
    return schemas


@requires_shared(SPIDER)
def test_the_sql_grammar_accepts_spider_train_gold_queries():
    """Gold SQL of 200 train questions, double-quoted strings as they are written: the grammar must not stop the
    model from writing what is right."""
    schemas = _schemas()
    questions = random.Random(7).sample(json.loads((SPIDER / "train_spider.json").read_text()), 200)
    grammars = {}
    accepted = 0
    for question in questions:
        sql = re.sub(r"\s+", " ", question["query"].strip().rstrip(";"))
        database = question["db_id"]
        grammar = grammars.setdefault(database, Grammar(sql_grammar(schemas[database])))
        accepted += grammar.matches(sql)
    assert accepted >= 0.98 * len(questions)


def test_gbnf_recognizer():
    grammar = Grammar('root ::= "a" [0-9]{2,3} ("x" | "yz")* end\nend ::= [^a-c] | "\\n"\n')
    assert grammar.matches("a12x")
    assert grammar.matches("a123yzxd")
    assert grammar.matches("a12\n")
    assert not grammar.matches("a1x")
    assert not grammar.matches("a1234x")
    assert not grammar.matches("a12b")
    with pytest.raises(relmem.Error, match="undefined"):
        Grammar("root ::= missing")
    with pytest.raises(relmem.Error, match="no rule 'root'"):
        Grammar('start ::= "a"')
    assert not Grammar('root ::= root "a" | "b" "a"').matches("ba" + "a")


def test_a_plan_that_must_keep_its_candidates_cannot_decline():
    schemas = {"concert_singer": SINGERS}
    free = Grammar(CONTRACTS["plan"].grammar(schemas=schemas))
    kept = Grammar(CONTRACTS["plan"].grammar(schemas=schemas, may_decline=False))
    plan = "Goal: count the singers\nBegin SQL\nSELECT COUNT(*) FROM singer\nEnd SQL\nDatabase: concert_singer"
    assert free.matches(plan) and kept.matches(plan)
    assert free.matches("No relevant database") and not kept.matches("No relevant database")
