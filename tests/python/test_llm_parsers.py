"""Parsers on messy LLM outputs, and the one-retry format helper."""
import functools

import pytest

import relmem
from relmem import llm as rllm
from relmem.contracts import CONTRACTS
from relmem.parsers import (RETURN_SQL_RESULT, RETURN_TEXT, FormatError, StageFailure, Target, ask_with_format,
                            parse_answer, parse_parts, parse_plan, parse_rephrase, parse_return_type, parse_sql,
                            parse_verdict)

CANONICAL_PLAN = """Goal: count the singers from France
Begin SQL
SELECT COUNT(*) FROM singer WHERE Country = 'France'
End SQL
Database: concert_singer
Goal: list the airports of Aberdeen
Begin SQL
SELECT AirportName FROM airports WHERE City = 'Aberdeen'
End SQL
Database: flight_2
"""
EXPECTED = [Target("count the singers from France", "SELECT COUNT(*) FROM singer WHERE Country = 'France'",
                   "concert_singer"),
            Target("list the airports of Aberdeen", "SELECT AirportName FROM airports WHERE City = 'Aberdeen'",
                   "flight_2")]

PLAN_VARIANTS = {
    "canonical": CANONICAL_PLAN,
    "bracketed markers": CANONICAL_PLAN.replace("Begin SQL", "[Begin SQL]").replace("End SQL", "[End SQL]"),
    "lower case, no colon on Database": CANONICAL_PLAN.lower().replace("database:", "database")
        .replace("'france'", "'France'").replace("'aberdeen'", "'Aberdeen'")
        .replace("select count(*) from singer where country", "SELECT COUNT(*) FROM singer WHERE Country")
        .replace("select airportname from airports where city", "SELECT AirportName FROM airports WHERE City"),
    "markdown fences inside markers": CANONICAL_PLAN.replace("Begin SQL\n", "Begin SQL\n```sql\n")
        .replace("\nEnd SQL", ";\n```\nEnd SQL"),
    "fences without markers": CANONICAL_PLAN.replace("Begin SQL\n", "```sql\n").replace("\nEnd SQL", "\n```"),
    "prose around, bold labels": "Sure! Here is the plan you asked for.\n\n" +
        CANONICAL_PLAN.replace("Goal:", "**Goal:**").replace("Database:", "**Database:**") +
        "\nThese two queries together answer the question.",
    "numbered targets": CANONICAL_PLAN.replace("Goal:", "1. Goal:", 1).replace("\nGoal:", "\n2. Goal:"),
    "inline markers": "Goal: count the singers from France\n"
        "[Begin SQL] SELECT COUNT(*) FROM singer WHERE Country = 'France' [End SQL]\nDatabase: concert_singer\n"
        "Goal: list the airports of Aberdeen\n"
        "[Begin SQL] SELECT AirportName FROM airports WHERE City = 'Aberdeen' [End SQL]\nDatabase: flight_2",
    "database first": "Database: concert_singer\nGoal: count the singers from France\nBegin SQL\n"
        "SELECT COUNT(*) FROM singer WHERE Country = 'France'\nEnd SQL\n\nDatabase: flight_2\n"
        "Goal: list the airports of Aberdeen\nBegin SQL\nSELECT AirportName FROM airports WHERE City = 'Aberdeen'\n"
        "End SQL\n",
    "backticked names and trailing remarks": CANONICAL_PLAN.replace("Database: concert_singer",
        "Database: `concert_singer` (it stores singers)").replace("Database: flight_2", "Database: flight_2."),
    "bare SQL between Goal and Database": CANONICAL_PLAN.replace("Begin SQL\n", "").replace("End SQL\n", ""),
    "stray prose line starting with Database": "Database selection: two of the candidates are needed.\n\n" +
        CANONICAL_PLAN,
    "windows line ends": CANONICAL_PLAN.replace("\n", "\r\n"),
}


@pytest.mark.parametrize("name", sorted(PLAN_VARIANTS))
def test_plan_variants(name):
    targets = parse_plan(PLAN_VARIANTS[name])
    assert [(t.sql, t.database) for t in targets] == [(t.sql, t.database) for t in EXPECTED], name
    assert [t.goal.lower().strip() for t in targets] == [t.goal.lower() for t in EXPECTED], name


def test_plan_unterminated_block_cut_at_max_tokens():
    text = "Goal: count singers\nBegin SQL\nSELECT COUNT(*) FROM singer\nDatabase: concert_singer\n"
    assert parse_plan(text) == [Target("count singers", "SELECT COUNT(*) FROM singer", "concert_singer")]


def test_plan_keeps_sql_text_exactly():
    sql = "SELECT T1.Name, COUNT(*) FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.Singer_ID = T2.Singer_ID " \
          "WHERE T1.Name LIKE '%Joe%' GROUP BY T1.Name ORDER BY COUNT(*) DESC LIMIT 1"
    [target] = parse_plan(f"Goal: g\nBegin SQL\n{sql};\nEnd SQL\nDatabase: concert_singer")
    assert target.sql == sql


def test_plan_no_relevant_database_is_an_empty_plan():
    assert parse_plan("None of the candidates fit.\nNo relevant database") == []
    assert parse_plan("no relevant databases.") == []


def test_plan_without_goal_gets_empty_goal():
    assert parse_plan("Begin SQL\nSELECT 1\nEnd SQL\nDatabase: d") == [Target("", "SELECT 1", "d")]


@pytest.mark.parametrize("text, message", [
    ("I think the singer database is the right one.", "no SQL found"),
    ("Goal: g\nBegin SQL\nSELECT 1\nEnd SQL\n", "no Database line"),
    ("Goal: g\nBegin SQL\n\nEnd SQL\nDatabase: d", "empty SQL"),
    ("", "no SQL found"),
])
def test_plan_malformed(text, message):
    with pytest.raises(FormatError, match=message):
        parse_plan(text)


def test_plan_known_databases():
    [target] = parse_plan("Goal: g\nBegin SQL\nSELECT 1\nEnd SQL\nDatabase: CONCERT_SINGER",
                          known_databases=["concert_singer", "flight_2"])
    assert target.database == "concert_singer"
    with pytest.raises(FormatError, match="unknown database 'pets_1'.*concert_singer, flight_2"):
        parse_plan("Goal: g\nBegin SQL\nSELECT 1\nEnd SQL\nDatabase: pets_1", known_databases=["concert_singer",
                                                                                               "flight_2"])


def test_format_error_is_a_relmem_error():
    assert issubclass(FormatError, relmem.Error)
    assert issubclass(StageFailure, relmem.Error)


@pytest.mark.parametrize("text, expected", [
    ("(YES)", True), ("(NO)", False), ("(yes)", True), ("[No]", False), ("( YES )", True),
    ("Reasoning: counting needs stored records.\nAnswer: (YES)", True),
    ("Reasoning: plain arithmetic.\nAnswer: (NO)", False),
    ("Answer: yes", True), ("answer: No.", False), ("Final answer: TRUE", True), ("Verdict - false", False),
    ("Yes, the databases are needed.", True), ("No. This is general knowledge.", False),
    ("true", True), ("False", False), ("**YES**", True),
    ("The question asks about stored flights, so a lookup is needed.\n\nYES", True),
    ("I must answer (YES) or (NO). The question needs no lookup, so: (NO)", False),
    ("Thinking: is there no data? There is data.\nAnswer: (YES)", True),
])
def test_verdict_variants(text, expected):
    assert parse_verdict(text) is expected


@pytest.mark.parametrize("text", ["", "maybe", "It depends on the databases.", "(YES) or (NO)"])
def test_verdict_malformed(text):
    with pytest.raises(FormatError):
        parse_verdict(text)


@pytest.mark.parametrize("text, expected", [
    ("Return type: (SQL)", RETURN_SQL_RESULT), ("Return type: (TEXT)", RETURN_TEXT),
    ("(sql)", RETURN_SQL_RESULT), ("[TEXT]", RETURN_TEXT),
    ("The rows are the answer.\nReturn type: SQL result", RETURN_SQL_RESULT),
    ("return type - text answer", RETURN_TEXT), ("SQL_RESULT", RETURN_SQL_RESULT), ("Text.", RETURN_TEXT),
    ("A written comparison is needed.\n\n**Return type:** `TEXT`", RETURN_TEXT),
    ("natural language", RETURN_TEXT),
    ("Choose (SQL) or (TEXT): the list of names is the answer itself -> (SQL)", RETURN_SQL_RESULT),
])
def test_return_type_variants(text, expected):
    assert parse_return_type(text) == expected


@pytest.mark.parametrize("text", ["", "It is complicated.", "(SQL) or (TEXT)"])
def test_return_type_malformed(text):
    with pytest.raises(FormatError):
        parse_return_type(text)


SQL = "SELECT Name FROM singer WHERE Country = 'France'"


@pytest.mark.parametrize("text", [
    f"Begin SQL\n{SQL}\nEnd SQL",
    f"[Begin SQL]\n{SQL};\n[End SQL]",
    f"Here is the corrected query:\n```sql\n{SQL}\n```\nIt now uses the stored value.",
    f"```\n{SQL}\n```",
    f"SQL: {SQL}",
    f"Corrected SQL: `{SQL}`",
    f"{SQL};",
    f"The original query was wrong.\nBegin SQL\nSELECT Name FROM singer WHERE Country = 'FR'\nEnd SQL\n"
    f"Fixed version:\nBegin SQL\n{SQL}\nEnd SQL",
    f"begin sql\n{SQL}\nend sql",
])
def test_single_sql_variants(text):
    assert parse_sql(text) == SQL


@pytest.mark.parametrize("text", ["", "I cannot fix this query.", "Begin SQL\n\nEnd SQL"])
def test_single_sql_malformed(text):
    with pytest.raises(FormatError):
        parse_sql(text)


@pytest.mark.parametrize("text, expected", [
    ("Answer: There are 3 singers from France.", "There are 3 singers from France."),
    ("Looking at the results...\nAnswer: Joe Sharp is 52.", "Joe Sharp is 52."),
    ("**Answer:** 42", "42"),
    ("The databases do not hold the answer.", "The databases do not hold the answer."),
    ("Answer: Aberdeen has 2 airports.\nExplanation: the second query lists them.", "Aberdeen has 2 airports."),
])
def test_answer_variants(text, expected):
    assert parse_answer(text) == expected


def test_answer_empty():
    with pytest.raises(FormatError):
        parse_answer("Answer:   ")


@pytest.mark.parametrize("text, expected", [
    ("Rephrased: How many flights depart from Aberdeen?", "How many flights depart from Aberdeen?"),
    ('Rephrased question: "How many flights depart from Aberdeen?"', "How many flights depart from Aberdeen?"),
    ("Question: # of flights?\nRephrased: How many flights are there?", "How many flights are there?"),
    ("How many flights depart from Aberdeen?\n(I expanded the abbreviation.)",
     "How many flights depart from Aberdeen?"),
])
def test_rephrase_variants(text, expected):
    assert parse_rephrase(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Parts:\n1. How many singers are there?\n2. What is the average age of dogs?",
     ["How many singers are there?", "What is the average age of dogs?"]),
    ("The question asks two things.\nParts:\n- Which shop is largest?\n- Who founded it?\n- Which shop is largest?",
     ["Which shop is largest?", "Who founded it?"]),
    ("Sub-questions:\nQ1: a?\nQ2) b?\nPart 3: c?", ["a?", "b?", "c?"]),
    ("Parts: How many singers are there?", ["How many singers are there?"]),
    ("Parts:\n1) \"Which cars are red?\"", ["Which cars are red?"]),
])
def test_parts_variants(text, expected):
    assert parse_parts(text) == expected


@pytest.mark.parametrize("text", ["Parts:", "Parts:\nfirst question\nsecond question", "Parts:\n1.\n2. \"\""])
def test_parts_malformed(text):
    with pytest.raises(FormatError):
        parse_parts(text)


# --- ask_with_format -------------------------------------------------------------------------------------------

def scripted(*replies):
    """A callable LLM answering with `replies` in order, recording the stage and messages of each call."""
    calls = []

    def fn(messages, **params):
        calls.append((params["stage"], messages))
        return replies[len(calls) - 1]
    return rllm.CallableLLM(fn, name="scripted"), calls


def test_ask_with_format_parses_first_reply():
    llm, calls = scripted("Answer: (YES)")
    trace = []
    assert ask_with_format(llm, [{"role": "user", "content": "q"}], parse_verdict, "context_switch", trace) is True
    assert len(calls) == 1 and calls[0][0] == "context_switch"
    assert trace[0]["attempt"] == 1 and trace[0]["error"] is None and trace[0]["output"] == "Answer: (YES)"
    assert trace[0]["usage"]["estimated"] is True


def test_ask_with_format_retries_once_with_a_reminder():
    llm, calls = scripted("I think it might need the data.", "Answer: (NO)")
    trace = []
    assert ask_with_format(llm, [("user", "q")], parse_verdict, "context_switch", trace) is False
    second_messages = calls[1][1]
    assert second_messages[-2] == {"role": "assistant", "content": "I think it might need the data."}
    assert second_messages[-1]["content"] == CONTRACTS["verdict"].reminder
    assert [e["attempt"] for e in trace] == [1, 2]
    assert "malformed output" in trace[0]["error"] and trace[1]["error"] is None


def test_ask_with_format_records_a_failure_after_the_retry():
    llm, calls = scripted("hmm", "still hmm")
    trace = []
    with pytest.raises(StageFailure, match="stage plan: malformed output: no SQL found") as failure:
        ask_with_format(llm, "q", parse_plan, "plan", trace)
    assert failure.value.stage == "plan"
    assert len(calls) == 2
    assert [e["output"] for e in trace] == ["hmm", "still hmm"]
    assert all(e["error"] for e in trace)


def test_ask_with_format_records_an_llm_failure():
    def broken(messages, **params):
        raise TimeoutError("upstream timed out")
    trace = []
    with pytest.raises(StageFailure, match="LLM call failed.*TimeoutError: upstream timed out"):
        ask_with_format(broken, "q", parse_sql, "self_correct", trace)
    assert len(trace) == 1 and trace[0]["output"] is None and "TimeoutError" in trace[0]["error"]


def test_ask_with_format_partial_keeps_the_plan_reminder():
    llm, calls = scripted("nothing useful", "Goal: g\nBegin SQL\nSELECT 1\nEnd SQL\nDatabase: D")
    parser = functools.partial(parse_plan, known_databases=["d"])
    assert ask_with_format(llm, "q", parser, "plan") == [Target("g", "SELECT 1", "d")]
    assert calls[1][1][-1]["content"] == CONTRACTS["plan"].reminder


def test_ask_with_format_passes_parameters():
    seen = {}

    def fn(messages, **params):
        seen.update(params)
        return "Rephrased: What is it?"
    assert ask_with_format(fn, "q", parse_rephrase, "rephrase", temperature=0.5, max_tokens=20) == "What is it?"
    assert seen == {"stage": "rephrase", "temperature": 0.5, "max_tokens": 20}
