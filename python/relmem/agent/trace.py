"""The trace of one question: a list of records, one per stage run (and per query target for target stages).

Each record is a plain dict, JSON-ready:
    stage       the stage name, e.g. "plan", "execute"
    database    the target's database (target stages only)
    target      the target's position in the plan, from 0 (target stages only)
    seconds     wall time of the stage
    llm_calls   every LLM attempt: messages, output, usage, cached, finish_reason, error
    tokens      prompt/completion/total tokens of those calls
    decision    what the stage decided (stage-specific keys); {"skipped": reason} when it had nothing to do
    error       None, or what went wrong (the pipeline then falls back or stops, see the stage)
A record is appended when its stage starts, so a failure part-way still leaves everything said so far.
"""
import json
import time
from contextlib import contextmanager

from ..parsers import StageFailure, ask_with_format


class Step:
    """The open record of one stage run; stages fill it through ask() and decide()."""

    def __init__(self, record):
        self.record = record
        self.fallback = None

    def on_failure(self, action=None, **decision):
        """What the stage does when the LLM gives nothing usable (a StageFailure inside the step): the failure is
        recorded, action(failure) runs when given, `decision` is recorded, and the rest of the step is skipped.
        Without it, the failure propagates to the pipeline, which stops the question."""
        def fallback(failure):
            if action is not None:
                action(failure)
            self.decide(**decision)
        self.fallback = fallback

    def ask(self, llm, messages, parser, **params):
        """ask_with_format() as this record's stage, with every attempt recorded here; raises StageFailure like it."""
        return ask_with_format(llm, messages, parser, self.record["stage"], trace=self.record["llm_calls"], **params)

    def decide(self, **decision):
        self.record["decision"].update(decision)

    def skip(self, reason):
        self.record["decision"]["skipped"] = reason

    def fail(self, error):
        self.record["error"] = str(error)


class Trace:
    """Records of one question, in order. `records` is the list itself (JSON-ready dicts)."""

    def __init__(self):
        self.records = []

    @contextmanager
    def step(self, stage, target=None):
        """Opens a record for `stage` (and a QueryTarget); times it and records an exception before it propagates."""
        record = {"stage": stage}
        if target is not None:
            record.update(database=target.database, target=target.index)
        record.update(seconds=0.0, llm_calls=[], tokens=None, decision={}, error=None)
        self.records.append(record)
        step = Step(record)
        start = time.perf_counter()
        try:
            yield step
        except StageFailure as failure:
            record["error"] = str(failure)
            if step.fallback is None:
                raise
            step.fallback(failure)
        except Exception as error:
            if record["error"] is None:
                record["error"] = f"{type(error).__name__}: {error}"
            raise
        finally:
            record["seconds"] = round(time.perf_counter() - start, 6)
            record["tokens"] = _tokens(record["llm_calls"])

    def tokens(self):
        """Token totals over all records."""
        return _tokens([call for record in self.records for call in record["llm_calls"]])

    def __iter__(self):
        return iter(self.records)

    def __len__(self):
        return len(self.records)

    def stages(self):
        return [record["stage"] for record in self.records]

    def to_list(self):
        return self.records


def _tokens(calls):
    totals = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0}
    for call in calls:
        usage = call.get("usage")
        if usage:
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                totals[key] += usage.get(key, 0)
        totals["calls"] += 1
    return totals


def format_trace(records, width=100):
    """A readable rendering of trace records, one block per record."""
    lines = []
    for record in records:
        head = record["stage"]
        if "database" in record:
            head += f" [{record['target'] + 1}: {record['database']}]"
        tokens = record.get("tokens") or {}
        cost = f"{record['seconds']:.3f}s"
        if tokens.get("calls"):
            cost += f", {tokens['calls']} LLM call(s), {tokens['total_tokens']} tokens"
        lines.append(f"- {head} ({cost})")
        for key, value in record["decision"].items():
            lines.append(f"    {key}: {_short(value, width)}")
        for call in record["llm_calls"]:
            if call.get("error"):
                lines.append(f"    LLM attempt {call['attempt']}: {_short(call['error'], width)}")
        if record["error"]:
            lines.append(f"    error: {_short(record['error'], width)}")
    return "\n".join(lines)


def _short(value, width):
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."
