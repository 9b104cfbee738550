"""Stages about the question itself: rephrasing follow-ups, the context switch (by the LLM or by the selection
memory's scores), and direct answers."""
import math

from ...parsers import parse_answer, parse_rephrase, parse_verdict
from ..config import fitted_switch_gate
from ..conversation import conversation_text
from ..schemas import overview_text
from .base import LLMStage, Stage
from .planning import NO_DATABASE_ANSWER
from .selection import parts_set_apart, ranked_databases


class Rephrase(LLMStage):
    """Rewrites a follow-up question into a self-contained one, resolving references to earlier turns."""
    name = "rephrase"
    group = "conversation"
    reads = ("question", "history")
    writes = ("standalone_question",)

    def __init__(self, llm, config):
        super().__init__(llm, None, config)

    def run(self, state):
        if not state.history:
            return
        with state.trace.step(self.name) as step:
            step.on_failure(fallback="the question as asked")
            state.standalone_question = self.ask(step, "rephrase", parse_rephrase, self.constraints("rephrase"),
                                                 context=conversation_text(state.history), question=state.question)
            step.decide(question=state.standalone_question)


class ContextSwitch(LLMStage):
    """Asks whether the question needs the databases at all, or can be answered from its own context. The LLM sees
    the collection's overview, or with config.switch_view == "candidates" only the databases selection proposed for
    the question (the stage then runs after selection)."""
    name = "context_switch"
    group = "context_switch"
    reads = ("standalone_question",)
    writes = ("needs_data",)

    def __init__(self, llm, catalog, config, descriptions=None):
        super().__init__(llm, catalog, config, descriptions)
        self.sees_candidates = config.switch_view == "candidates"
        if self.sees_candidates:
            self.reads = ("standalone_question", "candidates")
        self.overview = None if self.sees_candidates else overview_text(catalog, descriptions)

    def run(self, state):
        with state.trace.step(self.name) as step:
            overview = (overview_text(self.catalog, self.descriptions, databases=[c.database for c in state.candidates])
                        if self.sees_candidates else self.overview)
            state.needs_data = True
            step.on_failure(needs_databases=True, fallback="the databases are consulted")
            state.needs_data = self.ask(step, "context_switch", parse_verdict, self.constraints("verdict"),
                                        databases=overview, question=state.standalone_question)
            step.decide(needs_databases=state.needs_data)


class SelectionSwitch(Stage):
    """The context switch without an LLM: the question needs the databases when the selection memory's best
    database stands out, p = sigmoid(w_s * s1 + w_m * (s1 - s10) + b) >= 0.5 (config.switch_gate, by default the gate
    fitted for the memory's encoder), s1 and s10 the scores of its best and tenth database (the last, in a smaller
    collection). A question no database answers scores low everywhere, and no database stands out. A question of
    parts set apart (Q1: ...; Q2: ..., a list, or the decompose stage's parts) takes the highest p of the whole and
    of each part: two databases that both lead leave the whole question no clear leader."""
    name = "selection_switch"
    group = "context_switch"
    reads = ("standalone_question",)
    optional_reads = ("question_parts",)
    writes = ("needs_data",)
    DEPTH = 10

    def __init__(self, selection, config):
        self.selection = selection
        self.config = config
        self.gate = config.switch_gate or fitted_switch_gate(selection.encoder.name)

    def run(self, state):
        with state.trace.step(self.name) as step:
            matches = ranked_databases(self.selection, state, self.DEPTH)
            if not matches:
                state.needs_data = True  # the selection stage then says the collection is empty
                return
            score, margin = lead_features(matches)
            by_part = [self.lead_probability(self.selection.select(part, self.DEPTH))
                       for part in parts_set_apart(state)]
            probability = max([self.lead_probability(matches)] + by_part)
            state.needs_data = probability >= 0.5
            step.decide(needs_databases=state.needs_data, probability=round(probability, 4),
                        best=matches[0].database, score=round(score, 4), margin=round(margin, 4),
                        **({"parts": [round(p, 4) for p in by_part]} if by_part else {}))

    def lead_probability(self, matches):
        """The gate's p for one ranking (best first, DEPTH deep)."""
        return gate_probability(*lead_features(matches), self.gate)


def lead_features(matches):
    """The gate's inputs from one ranking (best first): the best score, and its margin over the last."""
    best = float(matches[0].score)
    return best, best - float(matches[-1].score)


def gate_probability(score, margin, gate):
    weight_score, weight_margin, bias = gate
    z = weight_score * score + weight_margin * margin + bias
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


class AnswerDirectly(LLMStage):
    """Answers a question the context switch found needs no database, from the question and the conversation."""
    name = "answer_directly"
    prompt = "answer_directly"  # the template; AnswerWithoutData asks with it too
    group = "context_switch"
    reads = ("needs_data", "standalone_question", "history")
    writes = ("answer",)

    def __init__(self, llm, config):
        super().__init__(llm, None, config)

    def wanted(self, state):
        return state.needs_data is False

    def run(self, state):
        if not self.wanted(state):
            return
        with state.trace.step(self.name) as step:
            step.on_failure(lambda failure: state.stop(f"could not answer: {failure.reason}"))
            answer = self.ask(step, self.prompt, parse_answer, self.constraints("answer"),
                              conversation=conversation_text(state.history) or "(none)",
                              question=state.standalone_question)
            step.decide(answer=answer)
            state.stop(answer)


class AnswerWithoutData(AnswerDirectly):
    """Answers, as AnswerDirectly does, a question the context switch sent to the databases when planning found none
    that holds its data and no virtual column could supply it: the LLM's own knowledge, or the facts the question
    states, are then all there is (a passage-reading question the context switch misjudged, say)."""
    name = "answer_without_data"
    runs_when_stopped = True
    reads = ("needs_data", "targets", "answer", "standalone_question", "history")

    def wanted(self, state):
        return (bool(state.needs_data) and state.stopped and not state.targets
                and (state.answer or "").startswith(NO_DATABASE_ANSWER))
