"""Database selection from the selection memory (with the question's parts as the LLM split it, when asked to), and
the stored values question words point to."""
from ..._relmem import marked_question_parts
from ...parsers import parse_parts
from ..state import Candidate
from .base import LLMStage, Stage


class DecomposeQuestion(LLMStage):
    """Asks the LLM for the independent questions a question asks; selection then ranks each and merges them
    (config.decompose == "llm"; by default the selection memory splits questions by its own rules)."""
    name = "decompose"
    reads = ("standalone_question",)
    writes = ("question_parts",)

    def __init__(self, llm, config):
        super().__init__(llm, None, config)

    def run(self, state):
        with state.trace.step(self.name) as step:
            step.on_failure(fallback="the selection memory's own split")  # question_parts stays empty
            state.question_parts = self.ask(step, "decompose", parse_parts, self.constraints("parts"),
                                            question=state.standalone_question)
            step.decide(parts=state.question_parts)


class SelectDatabases(Stage):
    """The selection memory's top-K databases for the question (or for its parts, when a decompose stage split it),
    best first; with config.candidates == "selected", only those in its calibrated set (always the first)."""
    name = "select_databases"
    reads = ("standalone_question",)
    optional_reads = ("question_parts",)
    writes = ("candidates",)

    def __init__(self, selection, config):
        self.selection = selection
        self.config = config

    def run(self, state):
        with state.trace.step(self.name) as step:
            matches = ranked_databases(self.selection, state, self.config.top_k)
            if self.config.candidates == "selected" and matches:
                chosen = {m.database for m in (self.selection.select_set_parts(state.question_parts)
                                               if state.question_parts else
                                               self.selection.select_set(state.standalone_question))}
                matches = matches[:1] + [m for m in matches[1:] if m.database in chosen]
            state.candidates = [Candidate(m.database, float(m.score), float(m.probability)) for m in matches]
            step.decide(databases=[{"database": c.database, "score": round(c.score, 4),
                                    "probability": round(c.probability, 4)} for c in state.candidates])
            if not state.candidates:
                state.stop("could not answer: the collection holds no databases")


def ranked_databases(selection, state, k):
    """The selection memory's k best databases for the question, or for its parts when a decompose stage split it."""
    if state.question_parts:
        return selection.select_parts(state.question_parts, k)
    return selection.select(state.standalone_question, k)


def parts_set_apart(state):
    """The question's parts when the decompose stage split it or its asker set them apart (Q1: ...; Q2: ..., a
    numbered list); [] for a question of one part or of sentences only."""
    parts = state.question_parts or marked_question_parts(state.standalone_question)
    return parts if len(parts) > 1 else []


class LinkQuestionValues(Stage):
    """Stored values that words of the question match, in each candidate database (no LLM needed)."""
    name = "link_question_values"
    group = "value_memory"
    reads = ("standalone_question", "candidates")
    writes = ("question_values",)

    def __init__(self, values, config):
        self.values = values
        self.config = config

    def run(self, state):
        with state.trace.step(self.name) as step:
            for candidate in state.candidates:
                if candidate.database not in self.values:
                    continue
                links = self.values.link(candidate.database, state.standalone_question,
                                         k=self.config.question_value_links)
                if links:
                    state.question_values[candidate.database] = links
            step.decide(values={db: [_link_summary(link) for link in links]
                                for db, links in state.question_values.items()})


def _link_summary(link):
    return {"span": link.span, "table": link.table, "column": link.column, "value": link.value,
            "score": round(link.score, 4)}
