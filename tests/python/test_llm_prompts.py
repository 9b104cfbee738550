"""Prompt templates: one per stage, every slot filled, clear errors otherwise; the stack end to end."""
import pytest
from fake_llm_server import FakeLLMServer, Rule

import relmem
from relmem import llm as rllm
from relmem.parsers import Target, ask_with_format, parse_plan, parse_verdict
from relmem.prompt_templates import PromptTemplate, available_prompts, load_prompt, render_prompt

SLOTS = {
    "context_switch": ["databases", "question"],
    "plan": ["schemas", "question"],
    "correct_values": ["schema", "question", "sql", "candidates"],
    "self_correct": ["schema", "question", "sql", "error"],
    "refine": ["schema", "question", "sql", "retriever_feedback", "detector_feedback"],
    "return_type": ["question", "results"],
    "generate_output": ["question", "results"],
    "rephrase": ["context", "question"],
    "hybrid_propose": ["schema", "finding", "question"],
}
# Requests relmem's hybrid layer builds in C++ (fill rows, evaluate SQL functions) have no template.
PROMPTED_STAGES = [stage for stage in rllm.STAGES if stage not in ("hybrid_fill", "hybrid_map", "hybrid_qa",
                                                                   "hybrid_match")]


def test_one_template_per_stage():
    assert available_prompts() == sorted(PROMPTED_STAGES)


@pytest.mark.parametrize("stage", PROMPTED_STAGES)
def test_template_slots(stage):
    assert load_prompt(stage).slots == SLOTS[stage]


@pytest.mark.parametrize("stage", PROMPTED_STAGES)
def test_render_fills_every_slot(stage):
    values = {slot: f"<{slot} value {{with braces}}>" for slot in SLOTS[stage]}
    messages = render_prompt(stage, **values)
    assert [m["role"] for m in messages] == ["system", "user"]
    text = "\n".join(m["content"] for m in messages)
    for value in values.values():
        assert value in text
    assert "{" + SLOTS[stage][0] + "}" not in text


def test_missing_and_unknown_slots_are_clear_errors():
    with pytest.raises(relmem.Error, match="prompt 'plan' is missing slot\\(s\\): schemas"):
        render_prompt("plan", question="q")
    with pytest.raises(relmem.Error, match="has no slot\\(s\\) schema \\(its slots: schemas, question\\)"):
        render_prompt("plan", question="q", schemas="s", schema="typo")
    with pytest.raises(relmem.Error, match="given None"):
        render_prompt("plan", question="q", schemas=None)
    with pytest.raises(relmem.Error, match="no prompt template 'planning'"):
        load_prompt("planning")


def test_template_format_checks():
    with pytest.raises(relmem.Error, match="must start with a section line"):
        PromptTemplate("t", "no section\n=== user ===\nhi")
    with pytest.raises(relmem.Error, match="plain name"):
        PromptTemplate("t", "=== user ===\n{question!r}")
    with pytest.raises(relmem.Error, match="literal braces"):
        PromptTemplate("t", "=== user ===\n{question")
    template = PromptTemplate("t", "=== system ===\nKeep {{braces}}.\n=== user ===\n{q}")
    assert template.render(q="x") == [{"role": "system", "content": "Keep {braces}."}, {"role": "user", "content": "x"}]


SCHEMAS = """Database: concert_singer
  singer(Singer_ID, Name, Country, Age)
Database: flight_2
  airports(City, AirportCode, AirportName)"""


def test_prompts_parsers_and_server_together():
    plan_reply = ("Only concert_singer is needed.\n\n[Begin SQL]\n```sql\nSELECT COUNT(*) FROM singer "
                  "WHERE Country = 'France';\n```\n[End SQL]\n**Database:** concert_singer")
    rules = [Rule(stage="context_switch", contains="singers from France", reply="Reasoning: stored.\nAnswer: (YES)"),
             Rule(stage="plan", contains="airports(City", fault="rate_limit", retry_after=0, times=1),
             Rule(stage="plan", contains="Begin SQL\n<one SQLite SELECT query>", reply="Goal: count\n" + plan_reply),
             Rule(stage="plan", reply="I would look at the singer table.")]
    question = "How many singers from France are there?"
    trace = []
    with FakeLLMServer(rules) as server:
        llm = rllm.MeteredLLM(rllm.OpenAIChat(server.base_url, "m", backoff=0.01))
        needs_databases = ask_with_format(llm, render_prompt("context_switch", databases="concerts, flights",
                                                             question=question), parse_verdict, "context_switch", trace)
        targets = ask_with_format(llm, render_prompt("plan", schemas=SCHEMAS, question=question), parse_plan, "plan",
                                  trace)
    assert needs_databases is True
    assert targets == [Target("count", "SELECT COUNT(*) FROM singer WHERE Country = 'France'", "concert_singer")]
    assert server.stages() == ["context_switch", "plan", "plan", "plan"]  # 429 retried; malformed plan reminded
    assert [(e["stage"], e["attempt"], e["error"] is None) for e in trace] == [
        ("context_switch", 1, True), ("plan", 1, False), ("plan", 2, True)]
    assert llm.ledger.by_stage()["plan"].calls == 2
