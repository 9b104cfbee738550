"""Prompt templates: one folder, one per LLM stage (plus the plan's context parts), every slot filled, clear errors
otherwise; the stack end to end."""
from pathlib import Path

import pytest
from fake_llm_server import FakeLLMServer, Rule

import relmem
from relmem import llm as rllm
from relmem.agent import Memories, Pipeline
from relmem.parsers import Target, ask_with_format, parse_plan, parse_verdict
from relmem.prompt_templates import PromptTemplate, available_prompts, load_prompt, render_prompt

SLOTS = {
    "context_switch": ["output_form", "databases", "question"],
    "plan": ["engines", "query_kind", "quote", "dialect_notes", "output_form", "schemas", "question"],
    "correct_values": ["engine", "dialect_notes", "output_form", "schema", "question", "sql", "candidates"],
    "self_correct": ["engine", "dialect_notes", "output_form", "schema", "question", "sql", "error"],
    "refine": ["engine", "dialect_notes", "output_form", "schema", "question", "sql", "retriever_feedback",
               "detector_feedback"],
    "return_type": ["output_form", "question", "results"],
    "generate_output": ["output_form", "question", "results"],
    "rephrase": ["output_form", "context", "question"],
    "answer_directly": ["output_form", "conversation", "question"],
    "plan_examples": ["examples"],
    "plan_conversation": ["conversation"],
    "hybrid_propose": ["schema", "finding", "question"],
    "decompose": ["output_form", "question"],
}


def test_one_folder_of_templates():
    assert available_prompts() == sorted(SLOTS)
    assert not (Path(relmem.__file__).parent / "agent" / "prompts").exists()


def test_every_llm_stage_has_its_own_template(demo_dir):
    catalog = relmem.Catalog(str(demo_dir))
    memories = Memories.build(catalog, encoder="hashing")
    pipeline = Pipeline.default(catalog, rllm.ScriptedLLM([]), memories.selection, memories.values,
                                config={"decompose": "llm"})
    # The hybrid stage asks under several names: hybrid_propose (this template) and the fill and SQL-function
    # requests relmem's C++ hybrid layer builds itself.
    # answer_without_data asks with answer_directly's template (its `prompt`).
    llm_stages = {getattr(stage, "prompt", stage.name) for stage in pipeline.stages
                  if hasattr(stage, "llm") and stage.name != "hybrid"}
    assert "answer_without_data" in pipeline.names
    assert sorted(llm_stages | {"hybrid_propose"}) == sorted(name for name in SLOTS if not name.startswith("plan_"))


@pytest.mark.parametrize("name", sorted(SLOTS))
def test_template_slots(name):
    assert load_prompt(name).slots == SLOTS[name]


@pytest.mark.parametrize("name", sorted(SLOTS))
def test_render_fills_every_slot(name):
    values = {slot: f"<{slot} value {{with braces}}>" for slot in SLOTS[name]}
    messages = render_prompt(name, **values)
    context_part = name.startswith("plan_")  # joins the plan's messages: no system message of its own
    assert [m["role"] for m in messages] == (["user"] if context_part else ["system", "user"])
    text = "\n".join(m["content"] for m in messages)
    for value in values.values():
        assert value in text
    assert "{" + SLOTS[name][0] + "}" not in text


def test_missing_and_unknown_slots_are_clear_errors():
    with pytest.raises(relmem.Error, match="prompt 'plan' is missing slot\\(s\\): schemas"):
        render_prompt("plan", question="q")
    with pytest.raises(relmem.Error, match="has no slot\\(s\\) schema \\(its slots: engines, query_kind, quote, "
                                           "dialect_notes, output_form, schemas, question\\)"):
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
