"""A stage's trace step: timing and errors recorded, and the fallback a stage declares for an unusable LLM reply."""
import pytest

from relmem.agent.trace import Trace
from relmem.parsers import StageFailure


def test_a_declared_fallback_runs_records_and_skips_the_rest_of_the_step():
    trace, ran, rest = Trace(), [], []
    with trace.step("plan") as step:
        step.on_failure(lambda failure: ran.append(failure.reason), fallback="the question as asked")
        raise StageFailure("plan", "no reply")
        rest.append("not reached")  # what a stage does after a usable reply
    record = trace.records[0]
    assert ran == ["no reply"] and rest == []
    assert record["error"] == "stage plan: no reply"
    assert record["decision"] == {"fallback": "the question as asked"}


def test_without_a_fallback_the_failure_reaches_the_pipeline():
    trace = Trace()
    with pytest.raises(StageFailure):
        with trace.step("refine"):
            raise StageFailure("refine", "malformed")
    assert trace.records[0]["error"] == "stage refine: malformed"


def test_other_errors_are_recorded_and_propagate_even_with_a_fallback():
    trace = Trace()
    with pytest.raises(ValueError):
        with trace.step("execute") as step:
            step.on_failure(fallback=True)
            raise ValueError("bad")
    assert trace.records[0]["error"] == "ValueError: bad" and trace.records[0]["decision"] == {}
