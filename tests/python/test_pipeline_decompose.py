"""The decompose switch: the LLM splits a question into parts and the selection memory ranks each and merges them;
by default (and when the LLM's split cannot be read) the selection memory splits the question by its own rules."""
import pytest
from fake_llm_server import FakeLLMServer, Rule
from pipeline_fixtures import catalog, memories  # noqa: F401 (fixtures)

import relmem
from relmem.agent import Pipeline, PipelineConfig
from relmem.llm import OpenAIChat

QUESTION = "How many singers are older than 40 and which hospitals are in Boston?"
PARTS = ["How many singers are older than 40?", "Which hospitals are in Boston?"]
RULES = [Rule(stage="context_switch", reply="Answer: (YES)"), Rule(stage="plan", reply="No relevant database")]


def ask(catalog, memories, rules, **config):
    with FakeLLMServer(rules) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0, timeout=5)
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, config=config)
        return pipeline, pipeline.ask(QUESTION), server.requests


def step(state, stage):
    return next(r for r in state.trace.records if r["stage"] == stage)


def test_the_llm_split_is_what_selection_ranks(catalog, memories):
    reply = "Parts:\n1. " + PARTS[0] + "\n2. " + PARTS[1]
    pipeline, state, requests = ask(catalog, memories, [Rule(stage="decompose", reply=reply)] + RULES,
                                    decompose="llm")
    assert pipeline.names.index("decompose") + 1 == pipeline.names.index("select_databases")
    assert [r.stage for r in requests][:2] == ["context_switch", "decompose"]
    assert QUESTION in requests[1].messages[-1]["content"]
    assert state.question_parts == PARTS and step(state, "decompose")["decision"]["parts"] == PARTS
    expected = [m.database for m in memories.selection.select_parts(PARTS, 5)]
    assert [c.database for c in state.candidates] == expected
    assert set(expected[:2]) == {"singers", "hospitals"}  # each part's best leads


def test_an_unreadable_split_falls_back_to_the_memory_rules(catalog, memories):
    _, state, requests = ask(catalog, memories, [Rule(stage="decompose", reply="Parts:\nfirst\nsecond")] + RULES,
                             decompose="llm")
    record = step(state, "decompose")
    assert [call["attempt"] for call in record["llm_calls"]] == [1, 2] and record["error"]
    assert record["decision"]["fallback"] == "the selection memory's own split" and state.question_parts == []
    assert [c.database for c in state.candidates] == [m.database for m in memories.selection.select(QUESTION, 5)]


def test_rules_are_the_default_and_settings_are_checked(catalog, memories):
    pipeline, state, requests = ask(catalog, memories, RULES)
    assert "decompose" not in pipeline.names and "decompose" not in [r.stage for r in requests]
    assert [c.database for c in state.candidates] == [m.database for m in memories.selection.select(QUESTION, 5)]
    with pytest.raises(relmem.Error, match="unknown decompose setting 'llms'"):
        Pipeline.default(catalog, None, memories.selection, config={"decompose": "llms"})
    with pytest.raises(relmem.Error, match="unknown decompose setting 'LLM'"):
        PipelineConfig(decompose="LLM")
