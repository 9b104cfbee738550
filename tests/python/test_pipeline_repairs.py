"""The static repairs between planning and the first execution: columns qualified by the wrong FROM item, columns
of a table missing from FROM, and counts of one row per row. The LLM is relmem.llm.ScriptedLLM (scripted replies, not a model)."""
import argparse
import sqlite3

from pipeline_fixtures import catalog, memories, plan  # noqa: F401 (fixtures)

from relmem.agent import Pipeline
from relmem.agent.commands import add_pipeline_arguments
from relmem.llm import ScriptedLLM, ScriptRule

QUESTION = "Which singers sang in a concert in 2019?"
# singer_in_concert (T2) has no name; singer (T1) is the only FROM item that has one.
WRONG = ("SELECT DISTINCT T2.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
         "JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = 2019")
FIXED = WRONG.replace("T2.name", "T1.name")


# singer_in_concert has no name; singer has, and singer_in_concert.singer_id references it.
UNJOINED = "SELECT DISTINCT name FROM singer_in_concert WHERE concert_id = 1"
JOINED = ("SELECT DISTINCT name FROM singer_in_concert JOIN singer ON singer_in_concert.singer_id = singer.singer_id "
          "WHERE concert_id = 1")

# Only singer_in_concert references singer: ranked by their concerts, not by a count SQLite refuses.
UNCOUNTED = "SELECT name FROM singer ORDER BY count(*) DESC LIMIT 1"
COUNTED = ("SELECT name FROM singer JOIN singer_in_concert ON singer.singer_id = singer_in_concert.singer_id "
           "GROUP BY singer.singer_id ORDER BY count(*) DESC LIMIT 1")


def ask(catalog, memories, sql=WRONG, **config):
    llm = ScriptedLLM([ScriptRule(stage="context_switch", reply="Answer: (YES)"),
                       ScriptRule(stage="plan", reply=plan(("the singers", sql, "singers"))),
                       ScriptRule(stage="return_type", reply="(SQL)")])
    pipeline = Pipeline.default(catalog, llm, memories.selection, disable={"self_correction"},
                                config={"refine_rounds": 0, **config})
    return pipeline, pipeline.ask(QUESTION)


def test_a_wrong_qualifier_is_repaired_before_the_query_first_runs(demo_dir, catalog, memories):
    pipeline, state = ask(catalog, memories)
    assert pipeline.names.index("plan") + 1 == pipeline.names.index("repair_qualifiers")
    [repair] = [r for r in state.trace if r["stage"] == "repair_qualifiers"]
    assert repair["error"] is None and repair["llm_calls"] == []
    start = WRONG.index("T2.name")
    assert repair["decision"] == {"repairs": [{"column": "name", "qualifier": "T2", "replacement": "T1",
                                               "start": start, "end": start + 2}], "sql": FIXED}
    [target] = state.targets
    assert target.planned_sql == WRONG and target.revisions == [("repair_qualifiers", FIXED)]
    with sqlite3.connect(f"file:{demo_dir / 'singers' / 'singers.sqlite'}?mode=ro", uri=True) as connection:
        expected = sorted(list(row) for row in connection.execute(FIXED))
    [result] = state.results()
    assert expected and result["error"] is None and result["sql"] == FIXED
    assert sorted(result["rows"]) == expected
    assert [r["stage"] for r in state.trace if r["error"]] == []


def test_correct_sql_is_recorded_unchanged(catalog, memories):
    llm = ScriptedLLM([ScriptRule(stage="context_switch", reply="Answer: (YES)"),
                       ScriptRule(stage="plan", reply=plan(("the singers", FIXED, "singers"))),
                       ScriptRule(stage="return_type", reply="(SQL)")])
    state = Pipeline.default(catalog, llm, memories.selection, config={"refine_rounds": 0}).ask(QUESTION)
    [repair] = [r for r in state.trace if r["stage"] == "repair_qualifiers"]
    assert repair["decision"] == {"repairs": []}
    assert state.targets[0].revisions == [] and state.results()[0]["error"] is None


def test_a_table_missing_from_from_is_joined_before_the_query_first_runs(demo_dir, catalog, memories):
    pipeline, state = ask(catalog, memories, sql=UNJOINED)
    assert pipeline.names.index("repair_qualifiers") + 1 == pipeline.names.index("repair_joins")
    [repair] = [r for r in state.trace if r["stage"] == "repair_joins"]
    clause = "JOIN singer ON singer_in_concert.singer_id = singer.singer_id"
    assert repair["decision"] == {"repairs": [{"column": "name", "table": "singer", "clause": clause,
                                               "position": UNJOINED.index(" WHERE")}], "sql": JOINED}
    assert state.targets[0].revisions == [("repair_joins", JOINED)]
    with sqlite3.connect(f"file:{demo_dir / 'singers' / 'singers.sqlite'}?mode=ro", uri=True) as connection:
        expected = sorted(list(row) for row in connection.execute(JOINED))
    [result] = state.results()
    assert expected and result["error"] is None and sorted(result["rows"]) == expected

    pipeline, state = ask(catalog, memories, sql=UNJOINED, repair_joins=False)
    assert "repair_joins" not in pipeline.names and "no such column: name" in state.results()[0]["error"]


def test_a_count_of_one_row_per_row_counts_the_referencing_rows_before_the_query_first_runs(demo_dir, catalog,
                                                                                             memories):
    pipeline, state = ask(catalog, memories, sql=UNCOUNTED)
    assert pipeline.names.index("repair_joins") + 1 == pipeline.names.index("repair_counts")
    [repair] = [r for r in state.trace if r["stage"] == "repair_counts"]
    assert repair["decision"] == {"repairs": [{"table": "singer_in_concert", "group_by": "GROUP BY singer.singer_id",
                                               "clause": "JOIN singer_in_concert ON singer.singer_id = "
                                                         "singer_in_concert.singer_id"}], "sql": COUNTED}
    assert state.targets[0].revisions == [("repair_counts", COUNTED)]
    with sqlite3.connect(f"file:{demo_dir / 'singers' / 'singers.sqlite'}?mode=ro", uri=True) as connection:
        expected = [list(row) for row in connection.execute(COUNTED)]
    [result] = state.results()
    assert expected and result["error"] is None and result["rows"] == expected

    pipeline, state = ask(catalog, memories, sql=UNCOUNTED, repair_counts=False)
    assert "repair_counts" not in pipeline.names and "misuse of aggregate" in state.results()[0]["error"]


def test_the_config_flag_turns_the_repair_off(catalog, memories):
    pipeline, state = ask(catalog, memories, repair_qualifiers=False)
    assert "repair_qualifiers" not in pipeline.names
    assert "repair_qualifiers" not in state.trace.stages()
    [result] = state.results()
    assert result["sql"] == WRONG and "no such column: T2.name" in result["error"]


def test_the_command_line_flag_sets_the_config_field():
    parser = argparse.ArgumentParser()
    add_pipeline_arguments(parser)
    assert parser.parse_args([]).repair_qualifiers is True
    assert parser.parse_args(["--no-repair-qualifiers"]).repair_qualifiers is False
    assert parser.parse_args([]).repair_joins is True
    assert parser.parse_args(["--no-repair-joins"]).repair_joins is False
    assert parser.parse_args([]).repair_counts is True
    assert parser.parse_args(["--no-repair-counts"]).repair_counts is False
