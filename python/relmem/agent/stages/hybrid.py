"""Hybrid answering: questions that need facts the database lacks ("Which drivers born in Germany won a race?"
when drivers has no nationality). When planning found no database with the data, or its queries name columns
that do not exist, the LLM proposes virtual columns against the real schema (name, type, meaning), relmem fills
only the rows the query reaches (relmem.hybrid) and runs the query over the extended database. The trace shows
every proposed column, each fill request and its tokens. Switched off with the `hybrid` switch.
"""
import json
import os
import re

from ... import Error
from ...encoders import relmem_home
from ...hybrid import session as hybrid_session
from ...contracts import OutputContract
from ...parsers import FormatError
from ..schemas import schema_text
from ..state import QueryTarget
from .base import LLMStage

_MISSING = re.compile(r"no such (column|table)", re.I)
_TYPES = ("TEXT", "INTEGER", "REAL", "DATE", "BOOLEAN")


def parse_proposal(text):
    """{"columns": [...], "sql": "..."} from the LLM's reply (fences and prose around it tolerated)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise FormatError("no JSON object in the answer")
    try:
        proposal = json.loads(text[start:end + 1])
    except json.JSONDecodeError as error:
        raise FormatError(f"the JSON does not parse: {error}") from None
    columns = proposal.get("columns") if isinstance(proposal, dict) else None
    if not isinstance(columns, list) or not isinstance(proposal.get("sql", ""), str):
        raise FormatError('expected {"columns": [...], "sql": "..."}')
    for column in columns:
        if not isinstance(column, dict) or not all(isinstance(column.get(k), str) and column[k]
                                                   for k in ("table", "name", "meaning")):
            raise FormatError("each column needs a table, a name and a meaning")
        if column.get("type", "TEXT").upper() not in _TYPES:
            raise FormatError(f"column {column['name']}: type must be one of {', '.join(_TYPES)}")
    return proposal


PROPOSAL = OutputContract(
    "hybrid_proposal",
    form='{"columns": [{"table": "...", "name": "...", "type": "...", "meaning": "...", "values_from": "..."}], '
         '"sql": "SELECT ..."}',
    reminder='Answer with one JSON object only: {"columns": [{"table": ..., "name": ..., "type": ..., '
             '"meaning": ...}], "sql": "SELECT ..."}',
    parser=parse_proposal,
    json_schema={"anyOf": [  # no column and no SQL, or columns and their SQL: a greedy small model that writes
        #                      no column does not go on to write a query it will not need
        {"type": "object", "required": ["columns", "sql"], "additionalProperties": False,
         "properties": {"columns": {"const": []}, "sql": {"const": ""}}},
        {"type": "object", "required": ["columns", "sql"], "additionalProperties": False, "properties": {
            "columns": {"type": "array", "minItems": 1, "maxItems": 4, "items": {
                "type": "object", "required": ["table", "name", "type", "meaning"], "additionalProperties": False,
                "properties": {"table": {"type": "string"}, "name": {"type": "string"},
                               "type": {"enum": list(_TYPES)}, "meaning": {"type": "string"},
                               "values_from": {"type": "string"}}}},
            "sql": {"type": "string", "minLength": 1}}}]})
parse_proposal.format_reminder = PROPOSAL.reminder


def default_store_path():
    return os.path.join(relmem_home(), "hybrid_fills.sqlite")


class HybridAnswer(LLMStage):
    """Proposes, fills and queries virtual columns when the stored data cannot answer the question.

    Runs even after planning stopped the question for lack of data (runs_when_stopped), and then takes it over."""
    name = "hybrid"
    group = "hybrid"
    runs_when_stopped = True
    reads = ("standalone_question", "candidates", "targets")
    optional_reads = ("needs_data",)
    writes = ("targets", "answer", "stopped")

    def __init__(self, llm, catalog, config, store=None, descriptions=None):
        super().__init__(llm, catalog, config, descriptions)
        self.store = store or default_store_path()

    def finding(self, state):
        """Why the stored data falls short, or None when it does not (or the question needs no data)."""
        if state.needs_data is False:
            return None
        if not state.targets:
            return "no candidate database stores the data this question needs" if state.candidates else None
        failed = [t for t in state.targets if t.result is not None and not t.ok and _MISSING.search(t.error or "")]
        if failed and len(failed) == len([t for t in state.targets if not t.ok]):
            return "; ".join(f"the query on {t.database} failed: {t.error}" for t in failed)
        return None

    def run(self, state):
        finding = self.finding(state)
        if finding is None:
            return
        database = state.targets[0].database if state.targets else state.candidates[0].database
        with state.trace.step(self.name) as step:
            step.on_failure()
            proposal = self.ask(step, "hybrid_propose", parse_proposal,
                                PROPOSAL.constraints() if self.config.constrained else {},
                                question=state.standalone_question, finding=finding,
                                schema=schema_text(self.catalog, database, self.descriptions.get(database, "")))
            columns, sql = proposal["columns"], proposal.get("sql", "").strip()
            step.decide(database=database, finding=finding, proposed_columns=columns, sql=sql)
            if not columns or not sql:
                step.decide(action="no virtual column can supply the missing facts")
                return
            try:
                result, stats = self.execute(database, columns, sql)
            except Error as error:  # a proposal naming unknown tables or existing columns
                step.fail(f"the proposed columns cannot be declared: {error}")
                return
            step.decide(fill_requests=stats.get("requests", []), fill_tokens=stats.get("fills", {}),
                        rounds=stats.get("rounds"), rows=len(result.rows) if result.ok else None,
                        error=None if result.ok else f"{result.error_kind}: {result.error}")
            if not result.ok:
                step.fail(f"{result.error_kind}: {result.error}")
                return
            target = QueryTarget(len(state.targets), f"hybrid: {finding}", database, sql, planned_sql=sql)
            target.executions[sql] = result
            state.targets = [target]
            state.stopped, state.answer = False, None

    def execute(self, database, columns, sql):

        tables = {}
        for column in columns:
            spec = {"name": column["name"], "type": column.get("type", "TEXT").upper(), "meaning": column["meaning"]}
            if column.get("values_from"):
                spec["values_from"] = column["values_from"]
            tables.setdefault(column["table"], []).append(spec)
        schema = {"tables": [{"table": table, "columns": specs} for table, specs in tables.items()]}
        session = hybrid_session(database, self.catalog.path(database), schema, self.llm, self.store,
                                 timeout=self.config.timeout, max_rows=self.config.max_rows)
        return session.execute(sql)
