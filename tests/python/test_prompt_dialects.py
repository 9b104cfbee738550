"""The dialect of the SQL prompts and grammars: a SQLite collection gets today's prompts byte for byte (recorded in
tests/fixtures/sqlite_prompts.json), a server database its engine's name, notes and grammar."""
import json
import pathlib

import pytest
from pipeline_fixtures import catalog, memories, plan, sql_block  # noqa: F401 (fixtures)

from relmem.agent import Pipeline
from relmem.contracts import CONTRACTS
from relmem.engines import EngineCatalog
from relmem.engines.dialects import plan_prompt_fields, sql_prompt_fields
from relmem.gbnf import Grammar
from relmem.llm import ScriptedLLM, ScriptRule
from relmem.prompt_templates import load_prompt, render_prompt

SQLITE_PROMPTS = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "sqlite_prompts.json"
SQL_STAGES = ("plan", "correct_values", "refine", "self_correct", "hybrid")
YES = ScriptRule(stage="context_switch", reply="Answer: (YES)")
SCRIPTS = {
    "value corrected": ("What is the average rating of Italian restaurants in Los Angeles?", [
        YES, ScriptRule(stage="plan", reply=plan(("the average", "SELECT AVG(rating) FROM restaurant WHERE "
                                                  "food_type = 'Italian' AND city = 'Los Angeles'", "restaurants"))),
        ScriptRule(stage="correct_values", reply=sql_block("SELECT AVG(rating) FROM restaurant WHERE "
                                                           "food_type = 'Italian' AND city = 'LA'")),
        ScriptRule(stage="return_type", reply="(TEXT)"), ScriptRule(stage="generate_output", reply="Answer: 4.2")]),
    "refined, then repaired": ("List the names of the singers from Japan.", [
        YES, ScriptRule(stage="plan", reply=plan(("names", "SELECT name FROM singer WHERE country = 'Japn'",
                                                  "singers"))),
        ScriptRule(stage="refine", reply=sql_block("SELECT nme FROM singer WHERE country = 'Japan'")),
        ScriptRule(stage="self_correct", reply=sql_block("SELECT name FROM singer WHERE country = 'Japan'")),
        ScriptRule(stage="return_type", reply="(SQL)")]),
    "no stored data": ("Which singers were born under a full moon?", [
        YES, ScriptRule(stage="plan", reply="No relevant database"),
        ScriptRule(stage="hybrid", reply='{"columns": [], "sql": ""}')]),
}


def sql_prompts(catalog, memories):
    """{script: [[stage, messages], ...]} of the SQL-writing stages' requests when each script runs."""
    prompts = {}
    for name, (question, rules) in sorted(SCRIPTS.items()):
        llm = ScriptedLLM(rules)
        disable = {"value_memory"} if name == "refined, then repaired" else set()
        Pipeline.default(catalog, llm, memories.selection, memories.values, disable=disable).ask(question)
        prompts[name] = [[r.stage, r.messages] for r in llm.requests if r.stage in SQL_STAGES]
    return prompts


def test_sqlite_prompts_are_unchanged(catalog, memories):
    recorded = json.loads(SQLITE_PROMPTS.read_text(encoding="utf-8"))
    rendered = sql_prompts(catalog, memories)
    assert {stage for requests in rendered.values() for stage, _ in requests} == set(SQL_STAGES)
    assert rendered == recorded


class EngineStub(EngineCatalog):
    """SQLite files read as if some were on servers: {database: engine}."""

    def __init__(self, paths, engines):
        super().__init__(paths)
        self.engines = engines

    def engine(self, db):
        return self.engines.get(db, "sqlite")


@pytest.fixture(scope="module")
def stub(demo_dir):
    return lambda engines: EngineStub([str(demo_dir)], engines)


def system_text(messages):
    return messages[0]["content"]


def test_server_prompts_name_their_engine_and_dialect(stub):
    postgres = stub({"singers": "postgresql", "restaurants": "postgresql"})
    plan_text = system_text(render_prompt("plan", schemas="s", question="q",
                                          **plan_prompt_fields(postgres, ["singers", "restaurants"])))
    assert "SQLite" not in plan_text
    assert "a collection of PostgreSQL databases" in plan_text and "a single PostgreSQL SELECT statement" in plan_text
    assert "ILIKE ignores it" in plan_text and "quote names that contain spaces with double quotes." in plan_text
    mysql = stub({"singers": "mysql"})
    for prompt in ("correct_values", "refine", "self_correct"):
        slots = {slot: "x" for slot in load_prompt(prompt).slots}
        text = system_text(render_prompt(prompt, **{**slots, **sql_prompt_fields(mysql, "singers")}))
        assert "SQLite" not in text and "a MySQL/MariaDB query" in text and "in backticks" in text, prompt
    mixed = plan_prompt_fields(mysql, ["singers", "restaurants"])
    assert mixed["engines"] == "MySQL/MariaDB and SQLite"
    assert "its database's dialect: singers: MySQL/MariaDB; restaurants: SQLite." in mixed["dialect_notes"]
    assert mixed["quote"] == "double quotes (backticks on MySQL/MariaDB)"


def test_the_stages_send_the_database_engine(stub, memories):
    catalog = stub({"singers": "postgresql"})
    _, rules = SCRIPTS["refined, then repaired"]
    llm = ScriptedLLM(rules)
    Pipeline.default(catalog, llm, memories.selection, memories.values, disable={"value_memory"}).ask(
        "List the names of the singers from Japan.")
    prompts = {r.stage: r.prompt for r in llm.requests}
    assert "You refine a PostgreSQL query" in prompts["refine"]
    assert "You fix a PostgreSQL query" in prompts["self_correct"]
    assert "PostgreSQL" in prompts["plan"]


def test_a_malformed_plan_is_reminded_of_the_engines_sql(stub, memories):
    catalog = stub({})
    catalog.engines = dict.fromkeys(catalog.databases, "postgresql")
    llm = ScriptedLLM([YES, ScriptRule(stage="plan", reply="I would look at the singer table.")])
    Pipeline.default(catalog, llm, memories.selection, memories.values).ask("List the names of the singers from Japan.")
    reminders = [r.messages[-1]["content"] for r in llm.requests if r.stage == "plan"][1:]
    assert reminders and "<one PostgreSQL SELECT statement>" in reminders[0]
    catalog.engines = {}
    llm = ScriptedLLM([YES, ScriptRule(stage="plan", reply="I would look at the singer table.")])
    Pipeline.default(catalog, llm, memories.selection, memories.values).ask("List the names of the singers from Japan.")
    assert [r.messages[-1]["content"] for r in llm.requests if r.stage == "plan"][1:] == [CONTRACTS["plan"].reminder]


@pytest.mark.parametrize("dialect, accepted, refused", [
    ("postgresql", ['SELECT "Name" FROM singer WHERE Country ILIKE \'fr%\'',
                    "SELECT name || ' ' || country FROM singer", "SELECT STRING_AGG(name, ',') FROM singer",
                    "SELECT CAST(age AS NUMERIC) FROM singer"],
     ['SELECT "name" FROM singer', "SELECT name FROM singer WHERE age == 3",
      "SELECT name FROM singer WHERE name GLOB 'a*'", "SELECT STRFTIME('%Y', birthday) FROM singer"]),
    ("mysql", ["SELECT `Name` FROM singer", "SELECT CONCAT(name, ' ', country) FROM singer",
               "SELECT CAST(age AS SIGNED) FROM singer", "SELECT name AS `the name` FROM singer"],
     ['SELECT "Name" FROM singer', "SELECT name || country FROM singer", "SELECT `name` FROM singer",
      "SELECT CAST(age AS TEXT) FROM singer"]),
])
def test_server_grammars_follow_their_dialect(dialect, accepted, refused):
    schema = {"singer": ["Name", "Country", "age", "birthday"]}
    grammar = Grammar(CONTRACTS["sql"].grammar(schema=schema, dialect=dialect))
    for sql in accepted:
        assert grammar.matches(sql_block(sql)), sql
    for sql in refused:
        assert not grammar.matches(sql_block(sql)), sql
    plan_grammar = Grammar(CONTRACTS["plan"].grammar(schemas={"a": schema, "b": schema}, dialects={"b": dialect}))
    assert plan_grammar.matches(plan(("g", accepted[0], "b")))
    assert not plan_grammar.matches(plan(("g", accepted[0], "a")))
