"""Questions whose asker set their parts apart (Q1: ...; Q2: ..., a list): the selection gate weighs each part, and
planning can ask for each part on its own."""
from types import SimpleNamespace

from fake_llm_server import FakeLLMServer, Rule
from pipeline_fixtures import catalog, memories, plan  # noqa: F401 (fixtures)

import relmem
from relmem.agent import Pipeline, State
from relmem.agent.config import PipelineConfig
from relmem.agent.stages.context import SelectionSwitch
from relmem.llm import OpenAIChat

COMPOSITE = ("Which question has a larger number as its answer. Q1: How many singers are there?; "
             "Q2: How many dogs are there?")


def test_marked_parts_are_template_and_list_markers_not_sentences():
    assert relmem.marked_question_parts(COMPOSITE) == ["How many singers are there?", "How many dogs are there?"]
    assert relmem.marked_question_parts("1. How many singers are there?\n2. List every dog.") == [
        "How many singers are there?", "List every dog."]
    assert relmem.marked_question_parts("How many singers are there? List every dog.") == []
    assert relmem.marked_question_parts("How many singers are there?") == []


class ScoredSelection:
    """A selection memory whose ranking of a text has a clear leader (scores 1.3, 0.9, ...) when the text is one of
    `leads`, and none otherwise (every score 1.0)."""

    def __init__(self, leads):
        self.leads = leads
        self.asked = []

    def select(self, text, k):
        self.asked.append(text)
        clear = text in self.leads
        return [SimpleNamespace(database=f"db{i}", score=(1.3 if i == 0 else 0.9) if clear else 1.0)
                for i in range(k)]

    def select_parts(self, parts, k):
        return self.select("", k)


def gate(question, selection, parts=()):
    state = State(question)
    state.question_parts = list(parts)
    # p = sigmoid(10 * margin - 2): 0.12 without a leader, 0.88 with one.
    SelectionSwitch(selection, PipelineConfig(switch_gate=(0.0, 10.0, -2.0))).run(state)
    return state.needs_data, state.trace.records[-1]["decision"]


def test_the_gate_sends_a_question_one_of_whose_marked_parts_has_a_clear_database():
    needs, decision = gate(COMPOSITE, ScoredSelection(leads=["How many dogs are there?"]))
    assert needs is True and decision["probability"] == 0.8808
    assert decision["parts"] == [0.1192, 0.8808]
    needs, decision = gate(COMPOSITE, ScoredSelection(leads=[]))
    assert needs is False and decision["parts"] == [0.1192, 0.1192]


def test_the_gate_reads_sentences_whole_and_the_decompose_stage_parts_apart():
    selection = ScoredSelection(leads=["How many dogs are there?"])
    needs, decision = gate("How many singers are there? How many dogs are there?", selection)
    assert needs is False and "parts" not in decision  # sentences of a passage are not parts set apart
    needs, decision = gate("singers and dogs", selection, parts=["How many singers?", "How many dogs are there?"])
    assert needs is True and decision["parts"] == [0.1192, 0.8808]


def ask(server, catalog, memories, question, **config):
    llm = OpenAIChat(server.base_url, "fake-model", max_retries=0, timeout=5)
    pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, memories.examples,
                                descriptions=memories.descriptions,
                                config={"context_switch": "selection", "switch_gate": (0.0, 0.0, 50.0), **config})
    return pipeline.ask(question)


def plan_prompts(server):
    return [request.prompt for request in server.requests if request.stage == "plan"]


def test_parts_planned_apart_each_get_their_own_plan_call(catalog, memories):
    question = ("Which question has a larger number as its answer. Q1: How many restaurants are there?; "
                "Q2: How many restaurants serve Italian food?")
    count_all = ("count restaurants", "SELECT COUNT(*) FROM restaurant", "restaurants")
    count_italian = ("count Italian ones", "SELECT COUNT(*) FROM restaurant WHERE food_type = 'Italian'",
                     "restaurants")
    rules = [Rule(stage="plan", contains="Question: How many restaurants are there?", reply=plan(count_all)),
             Rule(stage="plan", contains="Question: How many restaurants serve", reply=plan(count_italian, count_all)),
             Rule(stage="plan", reply=plan(count_all)),
             Rule(stage="return_type", reply="Return type: (TEXT)"),
             Rule(stage="generate_output", reply="Answer: Q1")]
    with FakeLLMServer(rules) as server:
        state = ask(server, catalog, memories, question, plan_parts=True)
        prompts = plan_prompts(server)
    assert len(prompts) == 2
    assert "Question: How many restaurants are there?" in prompts[0] and "Q2:" not in prompts[0]
    assert "Question: How many restaurants serve Italian food?" in prompts[1] and "Q1:" not in prompts[1]
    assert [t.sql for t in state.targets] == [count_all[1], count_italian[1]]  # the repeated target once
    decision = [r for r in state.trace.records if r["stage"] == "plan"][0]["decision"]
    assert decision["parts"] == ["How many restaurants are there?", "How many restaurants serve Italian food?"]

    with FakeLLMServer(rules) as server:
        state = ask(server, catalog, memories, question)
        prompts = plan_prompts(server)
    assert len(prompts) == 1 and "Q1: How many restaurants are there?; Q2:" in prompts[0]
    assert [t.sql for t in state.targets] == [count_all[1]]
