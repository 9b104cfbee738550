"""The state one question carries through the pipeline: every stage reads and writes it."""
from dataclasses import dataclass, field
from typing import List, Optional

from .trace import Trace


@dataclass
class Candidate:
    """A database the selection stage proposes, best first."""
    database: str
    score: float
    probability: Optional[float] = None


@dataclass
class QueryTarget:
    """One query of the plan: its goal, database and SQL as the stages revise it, and its execution."""
    index: int
    goal: str
    database: str
    sql: str
    planned_sql: str = ""
    revisions: list = field(default_factory=list)  # [(stage, sql)] every change after planning
    value_checks: list = field(default_factory=list)  # the value memory's checks of the current SQL's literals
    executed_sql: Optional[str] = None  # the SQL `result` belongs to
    result: object = None  # relmem.QueryResult
    refused: Optional[str] = None  # why the SQL was not executed (not a read-only statement)

    def revise(self, stage, sql):
        if sql != self.sql:
            self.revisions.append((stage, sql))
            self.sql = sql
            self.value_checks = []

    @property
    def error(self):
        if self.refused:
            return self.refused
        if self.result is not None and not self.result.ok:
            return f"{self.result.error_kind}: {self.result.error}"
        return None

    @property
    def ok(self):
        return self.result is not None and self.result.ok and not self.refused

    def to_result(self):
        """{"database", "sql", "columns", "rows", "error"} of the final version."""
        ok = self.ok
        return {"database": self.database, "sql": self.sql,
                "columns": list(self.result.columns) if ok else [],
                "rows": [[_json_value(v) for v in row] for row in self.result.rows] if ok else [],
                "error": self.error}


@dataclass
class Turn:
    """One finished question of a conversation."""
    question: str
    answer: str
    queries: list = field(default_factory=list)  # [(database, sql)] that ran without error


@dataclass
class State:
    question: str
    history: List[Turn] = field(default_factory=list)  # earlier turns given to this question, oldest first
    standalone_question: str = ""  # the question with references to earlier turns resolved (rephrase stage)
    needs_data: Optional[bool] = None  # the context switch's decision; None when it did not run
    candidates: List[Candidate] = field(default_factory=list)
    question_values: dict = field(default_factory=dict)  # database -> stored values matching question words
    examples: list = field(default_factory=list)  # [(Example, score)] for few-shot planning
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
        return [t for t in self.targets if t.result is not None or t.refused]

    def results(self):
        return [t.to_result() for t in self.executed_targets()]

    def to_dict(self):
        """The JSON object `relmem ask --json` prints: answer, results, trace."""
        return {"answer": self.answer or "", "results": self.results(), "trace": self.trace.to_list()}


def _json_value(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return value
