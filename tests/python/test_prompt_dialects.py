"""The dialect slot of the SQL prompts: a SQLite collection gets today's prompts byte for byte (recorded in
tests/fixtures/sqlite_prompts.json), a server database gets its engine's name and notes."""
import json
import pathlib

import pytest
from pipeline_fixtures import catalog, memories, plan, sql_block  # noqa: F401 (fixtures)

from relmem.agent import Pipeline
from relmem.llm import ScriptedLLM, ScriptRule

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
