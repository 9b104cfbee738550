"""The gold simulator: it answers from an item's gold, but only with what the prompt shows it, whatever the prompt's
wording; and the prompt-reading helpers it relies on."""
import pytest

import relmem
from relmem.eval import prompt_reading
from relmem.eval.gold_simulator import GoldSimulator
from relmem.eval.items import Item, Part
from relmem.eval.literal_spans import question_span
from relmem.parsers import parse_parts, parse_plan, parse_sql

LA = Part("How many restaurants are in Los Angeles?", "restaurants",
          "SELECT count(*) FROM restaurant WHERE city = 'LA'", [[15]])
CHICAGO = Part("How many hospitals are in chicago?", "hospitals",
               "SELECT count(*) FROM hospital WHERE city = 'Chicago'", [[5]])
SINGLE = Item("single-1", "single", LA.question, {"type": "rows"}, [LA])
DOUBLE = Item("double-1", "double", relmem.compose_question([LA.question, CHICAGO.question], "larger-number"),
              {"type": "larger", "question": 1}, [LA, CHICAGO])
ZERO = Item("zero-1", "zero", "What is 15% of 240?", {"type": "text", "accepted": ["36"]})
SCHEMA_RESTAURANTS = "Database: restaurants\nCREATE TABLE restaurant (id INTEGER, city TEXT)"
SCHEMA_HOSPITALS = "Database: hospitals\nCREATE TABLE hospital (id INTEGER, city TEXT)"


@pytest.fixture
def simulator():
    return GoldSimulator([SINGLE, DOUBLE, ZERO])


def user(text):
    return [{"role": "system", "content": "Example. Database: hospitals\nBegin SQL\nSELECT 1\nEnd SQL"},
            {"role": "user", "content": text}]


def test_question_spans_follow_the_question():
    assert question_span("LA", "How many restaurants are in Los Angeles?") == "Los Angeles"
    assert question_span("Chicago", "hospitals in chicago?") == "chicago"
    assert question_span("France", "singers from France") == "France"
    assert question_span("Aberdeen", "flights from Aberdeem airport") == "Aberdeem"
    assert question_span("F", "How many female doctors?") is None  # not expressed closely enough: gold is kept
    assert question_span("xyzzy", "How many singers?") is None


def test_context_switch_follows_whether_the_item_needs_databases(simulator):
    assert simulator(user(f"Question: {LA.question}"), stage="context_switch").endswith("(YES)")
    assert simulator(user(f"Question: {ZERO.question}"), stage="context_switch").endswith("(NO)")


def test_decomposition_is_the_items_own_parts(simulator):
    assert parse_parts(simulator(user(f"Question: {DOUBLE.question}"), stage="decompose")) == \
        [LA.question, CHICAGO.question]
    assert parse_parts(simulator(user(f"Question: {LA.question}"), stage="decompose")) == [LA.question]
    assert parse_parts(simulator(user(f"Question: {ZERO.question}"), stage="decompose")) == [ZERO.question]


def test_the_longest_item_question_in_the_prompt_identifies_the_item(simulator):
    assert simulator.item_for(f"Question: {DOUBLE.question}") is DOUBLE
    assert simulator.item_for(f"Question: {LA.question}") is SINGLE
    with pytest.raises(relmem.Error, match="no question"):
        simulator.item_for("Question: something else")


def test_plan_writes_only_parts_whose_schema_is_shown_with_the_questions_spelling(simulator):
    plan = simulator(user(f"Candidates:\n{SCHEMA_RESTAURANTS}\n\nQuestion: {DOUBLE.question}"), stage="plan")
    targets = parse_plan(plan)
    assert [(t.database, t.sql) for t in targets] == [
        ("restaurants", "SELECT count(*) FROM restaurant WHERE city = 'Los Angeles'")]
    both = simulator(user(f"{SCHEMA_HOSPITALS}\n\n{SCHEMA_RESTAURANTS}\n\nQuestion: {DOUBLE.question}"), stage="plan")
    assert [t.sql for t in parse_plan(both)][1].endswith("city = 'chicago'")
    assert simulator.stats["respelled"] >= 2
    nothing = simulator(user(f"Database: flights\nCREATE TABLE f (x)\n\nQuestion: {LA.question}"), stage="plan")
    assert parse_plan(nothing) == []
    other_table = simulator(user(f"Database: restaurants\nCREATE TABLE chef (id)\n\nQuestion: {LA.question}"),
                            stage="plan")
    assert parse_plan(other_table) == []  # the part's table is not shown: a perfect writer could not write it


def test_plan_writes_strings_in_single_quotes_for_a_server_engine():
    quoted = Part("How many airports are in Aberdeen?", "flight_2",
                  'SELECT count(*) FROM airports WHERE City = "Aberdeen"', [[2]])
    simulator = GoldSimulator([Item("single-2", "single", quoted.question, {"type": "rows"}, [quoted])])
    shown = f"Database: flight_2\nCREATE TABLE airports (City TEXT)\n\nQuestion: {quoted.question}"
    for system, sql in [("You plan ... a single SQLite SELECT statement", quoted.sql),
                        ("You plan ... a single PostgreSQL SELECT statement",
                         "SELECT count(*) FROM airports WHERE City = 'Aberdeen'")]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": shown}]
        assert [t.sql for t in parse_plan(simulator(messages, stage="plan"))] == [sql]


@pytest.mark.parametrize("candidates", [
    "Candidate stored values for each string literal:\n'Los Angeles' (restaurant.city =): 'LA', 'SF'",
    "Retriever:\nValue 'Los Angeles' not found in restaurant.city; similar stored values: 'LA', 'SF'.",
    "For the literal 'Los Angeles' the column holds: 'SF', 'LA'",
])
def test_a_gold_value_is_taken_only_when_the_prompt_offers_it(simulator, candidates):
    sql = "SELECT count(*) FROM restaurant WHERE city = 'Los Angeles'"
    prompt = f"{SCHEMA_RESTAURANTS}\n\nQuestion: {LA.question}\n\nQuery:\n{sql}\n\n{candidates}"
    for stage in ("correct_values", "refine"):
        assert parse_sql(simulator(user(prompt), stage=stage)).endswith("city = 'LA'")
    unoffered = f"{SCHEMA_RESTAURANTS}\n\nQuestion: {LA.question}\n\nSQL:\n{sql}\n\n" \
                "'Los Angeles' (restaurant.city =): 'SF', 'NYC'"
    assert parse_sql(simulator(user(unoffered), stage="correct_values")) == sql


def test_answers_come_from_the_results_shown(simulator):
    results = ("Query 1 on database restaurants (count)\nSQL: SELECT ...\nResult:\ncount(*)\n--------\n15\n\n"
               "Query 2 on database hospitals (count)\nSQL: SELECT ...\nResult:\ncount(*)\n--------\n5")
    assert simulator(user(f"Question: {DOUBLE.question}\n\nQuery results:\n{results}"),
                     stage="generate_output") == "Answer: Q1"
    swapped = results.replace("\n15\n", "\n2\n")
    assert simulator(user(f"Question: {DOUBLE.question}\n\n{swapped}"), stage="generate_output") == "Answer: Q2"
    one = results.split("\n\n")[0]
    assert "Q" not in simulator(user(f"Question: {DOUBLE.question}\n\n{one}"), stage="generate_output")[8:]


def test_direct_answers_and_return_types(simulator):
    assert simulator(user(f"Question: {ZERO.question}"), stage="generate_output") == "Answer: 36"
    assert simulator(user(f"Question: {ZERO.question}"), stage="answer_directly") == "Answer: 36"
    assert simulator(user(f"Question: {LA.question}"), stage="return_type").endswith("(SQL)")
    assert simulator(user(f"Question: {DOUBLE.question}"), stage="return_type").endswith("(TEXT)")
    with pytest.raises(relmem.Error, match="stage"):
        simulator(user(f"Question: {LA.question}"), stage="juggle")


def test_prompt_reading_ignores_the_system_prompt_and_tolerates_wording():
    text = prompt_reading.user_text(user("## Database = restaurants\nCREATE TABLE restaurant (id)"))
    assert prompt_reading.shown_databases(text) == ["restaurants"]
    assert prompt_reading.shown_databases("Schemas of hospitals and restaurants", ["hospitals", "singers"]) == \
        ["hospitals"]
    schemas = ('Database: a\nCREATE TABLE "My ""T""" (x);\ncreate table if not exists `b` (y)\n\n'
               'Database: c\nCREATE TABLE d')
    assert prompt_reading.shown_tables(schemas, "a") == {'my "t"', "b"}
    assert prompt_reading.shown_tables(schemas, "c") == {"d"}
    assert prompt_reading.shown_tables(schemas, "x") is None
    assert prompt_reading.shown_tables("Database: a\ntables: t(x)", "a") is None
    assert prompt_reading.query_in("Fix this.\n\nSELECT a\nFROM t\n\nError: no such column") == "SELECT a\nFROM t"
    assert prompt_reading.query_in("Current SQL query:\nSELECT 1\n\nMore text") == "SELECT 1"
    assert prompt_reading.offered_values("'it''s' (t.c =): 'its', 'it is'", "it's") == ["its", "it is"]
    blocks = prompt_reading.result_blocks("Result 1 (database: singers)\nname\n----\nJoe\n\nQuery 2 on database x\n"
                                          "SQL: SELECT\nResult:\nfailed: no such table")
    assert blocks == [("singers", [["Joe"]]), ("x", None)]
