"""The gold simulator: a stand-in LLM that answers every stage from an evaluation item's gold, but only with what
the pipeline showed it. It measures what relmem's memories and stages let a perfect SQL writer reach, never an
LLM's accuracy.

    simulator = GoldSimulator(items)
    llm = relmem.llm.CallableLLM(simulator)          # or behind any server: simulator(messages, stage=...)

Per stage (recognised by the request's `stage`; the prompt is read by prompt_reading):
    context_switch   YES when the item has parts (databases), NO otherwise
    decompose        the item's part questions (its question whole when it has one part or none): a perfect split
    plan             one target per part whose database's schema the prompt shows, with every table the part's
                     gold SQL reads (when the schema is written as CREATE TABLE statements), with the gold SQL whose
                     string literals are written the way the question writes them (literal_spans), in single quotes
                     when the prompt asks for a server engine's SQL; "No relevant database" when no part's schema is
                     shown
    correct_values,  a literal is changed to its gold value only when the prompt offers that value for it;
    refine           anything else stays as it is
    self_correct     the query unchanged (the gold SQL itself needs no repair)
    return_type      SQL for single-database items, TEXT otherwise
    generate_output  from the query results in the prompt only: the larger Q of a comparison, every value of each
                     part; without results (a direct answer), the gold answer of a question that needs no database
"""
import threading

from .. import sql as sqltools
from .. import Error
from ..contracts import (write_answer, write_parts, write_plan, write_rephrase, write_return_type, write_sql,
                         write_verdict)
from ..parsers import RETURN_SQL_RESULT, RETURN_TEXT
from . import prompt_reading
from .answers import as_number
from .literal_spans import question_span

NAME = "gold-simulator"
NOT_IN_PROMPT = "The databases shown do not hold this."


def _wildcards(value):
    """(prefix, core, suffix) of a LIKE pattern's % wildcards."""
    core = value.strip("%")
    start = value.find(core) if core else len(value)
    return value[:start], core, value[start + len(core):]


def _string_literals(sql):
    return [literal for literal in sqltools.parse(sql).literals if literal.kind == "string"]


class GoldSimulator:
    """A callable LLM `fn(messages, stage=..., **params) -> str` over `items` (relmem.eval.items.Item)."""

    def __init__(self, items):
        self.items = sorted(items, key=lambda item: len(item.question), reverse=True)  # longest match first
        self.known_databases = sorted({db for item in self.items for db in item.databases})
        self.stats = {"literals": 0, "as_in_question": 0, "respelled": 0, "not_in_question": 0}
        self._lock = threading.Lock()
        self._stages = {"context_switch": self.context_switch, "plan": self.plan,
                        "correct_values": self.correct_values, "refine": self.correct_values,
                        "self_correct": self.self_correct, "return_type": self.return_type,
                        "generate_output": self.answer, "answer_directly": self.answer, "rephrase": self.rephrase,
                        "decompose": self.decompose}

    def __call__(self, messages, stage="", **params):
        text = prompt_reading.user_text(messages)
        item = self.item_for(text)
        handler = self._stages.get(stage) or next(
            (self._stages[name] for name in ("answer", "correct", "refine", "plan") if name in (stage or "")), None)
        if handler is None:
            raise Error(f"the gold simulator does not know stage {stage!r}")
        if handler == self.plan:
            return handler(item, text, prompt_reading.names_a_server_dialect(messages))
        return handler(item, text)

    def item_for(self, text):
        """The item whose question the prompt holds (the longest such question)."""
        for item in self.items:
            if item.question in text:
                return item
        raise Error("the gold simulator found no question of its evaluation set in the prompt")

    # --- stages ------------------------------------------------------------------------------------------------

    def context_switch(self, item, text):
        return write_verdict(bool(item.parts), f"{'the databases hold' if item.parts else 'no database is needed for'} "
                                               "this.")

    def rephrase(self, item, text):
        return write_rephrase(item.question)

    def decompose(self, item, text):
        return write_parts([part.question for part in item.parts] if len(item.parts) > 1 else [item.question])

    def plan(self, item, text, server_dialect=False):
        shown = set(prompt_reading.shown_databases(text, self.known_databases))
        return write_plan([(part.question, self.written_sql(part, item.question, server_dialect), part.database)
                           for part in item.parts if part.database in shown and self.tables_shown(part, text)])

    def correct_values(self, item, text):
        current = prompt_reading.query_in(text)
        if current is None:
            raise Error("the gold simulator found no query in the prompt")
        shown = prompt_reading.shown_databases(text, self.known_databases)
        part = next((p for p in item.parts if p.database in shown), None)
        return write_sql(self.offered_gold(current, part.sql, text) if part else current)

    def self_correct(self, item, text):
        current = prompt_reading.query_in(text)
        if current is None:
            raise Error("the gold simulator found no query in the prompt")
        return write_sql(current)

    def return_type(self, item, text):
        return write_return_type(RETURN_SQL_RESULT if item.kind in ("single", "value") else RETURN_TEXT)

    def answer(self, item, text):
        blocks = prompt_reading.result_blocks(text)
        if not blocks:
            return write_answer(self.direct_answer(item))
        rows = {database: found for database, found in reversed(blocks)}  # the first block of a database wins
        parts = [rows.get(part.database) for part in item.parts]
        if item.kind == "double":
            numbers = [_single_number(found) for found in parts]
            if None in numbers:
                return write_answer("The results do not allow the comparison.")
            return write_answer(f"Q{1 if numbers[0] > numbers[1] else 2}")
        said = ["; ".join(", ".join(row) for row in found) if found else NOT_IN_PROMPT for found in parts]
        if len(said) == 1:
            return write_answer(said[0])
        return write_answer(" ".join(f"Q{i}: {text}." for i, text in enumerate(said, start=1)))

    # --- gold ----------------------------------------------------------------------------------------------------

    @staticmethod
    def tables_shown(part, text):
        """Whether the prompt shows every table the part's gold SQL reads (True when it lists no CREATE TABLE)."""
        shown = prompt_reading.shown_tables(text, part.database)
        return shown is None or all(table.lower() in shown for table in sqltools.parse(part.sql).tables)

    @staticmethod
    def direct_answer(item):
        if item.answer["type"] == "text":
            return item.answer["accepted"][0]
        if item.answer["type"] == "choice":
            return item.answer["choices"][item.answer["key"]]
        return "This needs data from the databases."

    def written_sql(self, part, question, server_dialect=False):
        """The gold SQL with each string literal spelled as the question spells it (kept when it does not). For a
        server engine every string is written in single quotes: Spider's gold writes many in double quotes, which
        SQLite alone reads as strings."""
        replacements, counts = {}, dict.fromkeys(self.stats, 0)
        for literal in _string_literals(part.sql):
            prefix, core, suffix = _wildcards(literal.value)
            spelled = question_span(core, question)
            counts["literals"] += 1
            if server_dialect:
                replacements[literal.index] = literal.value
            if spelled is None:
                counts["not_in_question"] += 1
            elif spelled == core:
                counts["as_in_question"] += 1
            else:
                counts["respelled"] += 1
                replacements[literal.index] = prefix + spelled + suffix
        with self._lock:
            for key, value in counts.items():
                self.stats[key] += value
        return sqltools.rewrite_literals(part.sql, replacements) if replacements else part.sql

    @staticmethod
    def offered_gold(current, gold, text):
        """`current` with each string literal that differs from its gold counterpart replaced by the gold value,
        when the prompt offers that value for it. Literals pair up by position; a query whose string literals do
        not pair up with the gold's is returned unchanged."""
        try:
            mine, golds = _string_literals(current), _string_literals(gold)
        except Error:
            return current
        if len(mine) != len(golds):
            return current
        replacements = {}
        for written, wanted in zip(mine, golds):
            if written.value == wanted.value:
                continue
            offered = prompt_reading.offered_values(text, written.value)
            if wanted.value in offered or _wildcards(wanted.value)[1] in offered:
                replacements[written.index] = wanted.value
        return sqltools.rewrite_literals(current, replacements) if replacements else current


def _single_number(rows):
    if not rows or len(rows) != 1 or len(rows[0]) != 1:
        return None
    return as_number(rows[0][0])
