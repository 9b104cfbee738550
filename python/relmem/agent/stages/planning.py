"""Planning: few-shot examples for the question, then one target (goal, SQL, database) per database needed."""
import functools

from ...contracts import CONTRACTS
from ...engines.catalog import engine_of
from ...engines.dialects import plan_prompt_fields
from ...parsers import parse_plan
from ...prompt_templates import render_prompt
from ..conversation import conversation_text
from ..schemas import schema_text, shown_columns
from ..state import QueryTarget
from .base import LLMStage, Stage
from .selection import parts_set_apart


class RetrieveExamples(Stage):
    """Question-SQL examples and terminology from the example memory that are similar enough to the question."""
    name = "retrieve_examples"
    group = "examples"
    reads = ("standalone_question",)
    writes = ("examples",)

    def __init__(self, examples, config):
        self.examples = examples
        self.config = config

    def run(self, state):
        with state.trace.step(self.name) as step:
            state.examples = self.examples.search(state.standalone_question, k=self.config.example_k,
                                                  min_score=self.config.example_threshold)
            step.decide(examples=[{**example.to_dict(), "score": round(score, 4)} for example, score in state.examples])


class Plan(LLMStage):
    """The LLM's retrieval plan over the top-K databases, most relevant first, with the conversation and examples.
    Their schemas are the built context (State.context) when a build_context stage ran, else their full DDL."""
    name = "plan"
    reads = ("standalone_question", "history", "candidates")
    optional_reads = ("examples", "context")
    writes = ("targets",)

    def reminder(self, databases):
        """The plan's format reminder, naming the SQL the candidates' engines read (the contract's on SQLite)."""
        fields = plan_prompt_fields(self.catalog, databases)
        if fields["engines"] == "SQLite":
            return CONTRACTS["plan"].reminder
        return CONTRACTS["plan"].reminder.replace("<one SQLite SELECT query>", f"<one {fields['query_kind']}>")

    def messages(self, state, question=None):
        names = [c.database for c in state.candidates]
        schemas = (state.context.text if state.context is not None else
                   "\n\n".join(schema_text(self.catalog, db, self.descriptions.get(db, "")) for db in names))
        messages = render_prompt("plan", schemas=schemas, question=question or state.standalone_question,
                                 **plan_prompt_fields(self.catalog, names))
        context = []
        if state.examples:
            context += render_prompt("plan_examples", examples=examples_text(state.examples))
        if state.history:
            context += render_prompt("plan_conversation", conversation=conversation_text(state.history))
        return messages[:-1] + context + messages[-1:]

    def run(self, state):
        with state.trace.step(self.name) as step:
            known = [c.database for c in state.candidates]
            step.on_failure(lambda failure: state.stop(f"could not answer: no usable plan ({failure.reason})"))
            schemas = {db: shown_columns(state, self.catalog, db) for db in known}
            constraints = self.constraints("plan", schemas=schemas,
                                           dialects={db: engine_of(self.catalog, db) for db in known},
                                           may_decline=not self.config.keep_candidates)
            parts = parts_set_apart(state) if self.config.plan_parts else []
            targets = []
            for part in parts or [None]:
                for target in self.ask(step, self.messages(state, part),
                                       functools.partial(parse_plan, known_databases=known), constraints,
                                       self.reminder(known)):
                    if all((t.database, t.sql) != (target.database, target.sql) for t in targets):
                        targets.append(target)
            state.targets = [QueryTarget(i, t.goal, t.database, t.sql, planned_sql=t.sql)
                             for i, t in enumerate(targets)]
            step.decide(targets=[{"goal": t.goal, "database": t.database, "sql": t.sql} for t in state.targets],
                        **({"parts": parts} if parts else {}))
            if not targets:
                state.stop(f"{NO_DATABASE_ANSWER} (looked at {', '.join(known)})")


NO_DATABASE_ANSWER = "could not answer: none of the databases holds data for this question"


def examples_text(examples):
    lines = []
    for example, _ in examples:
        if example.kind == "term":
            lines.append(f"Term: {example.term}: {example.definition}")
        else:
            lines.append(f"Question: {example.question}\nSQL on {example.database}: {example.sql}")
    return "\n\n".join(lines)
