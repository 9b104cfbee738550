"""The state one question carries through the pipeline: every stage reads and writes it."""
from dataclasses import dataclass, field
from typing import List, Optional

from ..typed_json import json_rows
from .trace import Trace


@dataclass
class Candidate:
    """A database the selection stage proposes, best first."""
    database: str
    score: float
    probability: Optional[float] = None


@dataclass
class QueryTarget:
    """One query of the plan: its goal, database and SQL as the stages revise it. What is learnt about each SQL
    text it has had, its read-only execution and the value memory's checks of its literals, is kept per text
    (stages/queries.py computes each once); `result` and `value_checks` are those of the current SQL."""
    index: int
    goal: str
    database: str
    sql: str
    planned_sql: str = ""
    revisions: list = field(default_factory=list)  # [(stage, sql)] every change after planning
    executions: dict = field(default_factory=dict)  # SQL text -> relmem.QueryResult
    value_checks_by_sql: dict = field(default_factory=dict)  # SQL text -> (checks, feedback), or the relmem.Error

    def revise(self, stage, sql):
        if sql != self.sql:
            self.revisions.append((stage, sql))
            self.sql = sql

    @property
    def result(self):
        """The execution of the current SQL; None until it has run."""
        return self.executions.get(self.sql)

    @property
    def value_checks(self):
        """The value memory's checks of the current SQL's literals; [] until checked (or when it does not parse)."""
        known = self.value_checks_by_sql.get(self.sql)
        return known[0] if isinstance(known, tuple) else []

    @property
    def refused(self):
        """Whether the executor refused the current SQL (not one read-only SELECT): nothing ran, nothing to repair."""
        return self.result is not None and self.result.error_kind == "refused"

    @property
    def error(self):
        """"<error kind>: <message>" when the current SQL was refused or failed, else None."""
        if self.result is not None and not self.result.ok:
            return f"{self.result.error_kind}: {self.result.error}"
        return None

    @property
    def ok(self):
        return self.result is not None and self.result.ok

    def to_result(self):
        """{"database", "sql", "columns", "rows", "error"} of the final version."""
        ok = self.ok
        return {"database": self.database, "sql": self.sql,
                "columns": list(self.result.columns) if ok else [],
                "rows": json_rows(self.result.rows) if ok else [],
                "error": self.error}


@dataclass
class Turn:
    """One finished question of a conversation."""
    question: str
    answer: str
    queries: list = field(default_factory=list)  # [(database, sql)] that ran without error


@dataclass
class State:
    """What one question carries through the pipeline. Stages declare which fields they read and write (Stage.reads,
    Stage.writes; "targets.<field>" for a field of each QueryTarget); INPUTS are set before any stage runs."""
    INPUTS = ("question", "history", "standalone_question")

    question: str
    history: List[Turn] = field(default_factory=list)  # earlier turns given to this question, oldest first
    standalone_question: str = ""  # the question with references to earlier turns resolved (rephrase stage)
    needs_data: Optional[bool] = None  # the context switch's decision; None when it did not run
    question_parts: List[str] = field(default_factory=list)  # the LLM's split of the question (decompose stage);
    #                                                          empty: the selection memory splits it by its own rules
    candidates: List[Candidate] = field(default_factory=list)
    question_values: dict = field(default_factory=dict)  # database -> stored values matching question words
    examples: list = field(default_factory=list)  # [(Example, score)] for few-shot planning
    context: Optional[object] = None  # the SchemaContext of the candidates that the SQL prompts show
    targets: List[QueryTarget] = field(default_factory=list)
    return_type: Optional[str] = None
    answer: Optional[str] = None
    stopped: bool = False  # a stage ended the question (answer set)
    trace: Trace = field(default_factory=Trace)

    def __post_init__(self):
        self.standalone_question = self.standalone_question or self.question

    def stop(self, answer):
        self.answer = answer
        self.stopped = True

    def executed_targets(self):
        return [t for t in self.targets if t.result is not None]

    def results(self):
        return [t.to_result() for t in self.executed_targets()]

    def to_dict(self):
        """The JSON object `relmem ask --json` prints: answer, results, trace."""
        return {"answer": self.answer or "", "results": self.results(), "trace": self.trace.to_list()}

