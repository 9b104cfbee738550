"""Read-only execution of each target, and self-correction of the ones SQLite could not run."""
from ... import Error
from ... import sql as sqltools
from ...parsers import parse_sql
from .base import LLMStage, Stage
from .queries import execution, pending, reuse_note


def outcome(target):
    """What executing the target's current SQL gave, for a trace record."""
    if target.refused:
        return {"refused": target.error}
    if not target.ok:
        return {"error": target.error}
    return {"columns": list(target.result.columns), "rows": len(target.result.rows),
            "truncated": target.result.truncated}


def diagnosed_error(catalog, target):
    """The executor's error, followed by the static inspector's findings on the query: they often name the fix that
    the bare error does not (which table has the column, and the foreign key to join it on)."""
    error = target.result.error
    try:
        diagnostics = sqltools.inspect(target.sql, catalog, target.database)
    except Error:
        return error
    findings = [f"- {d.severity}: {d.message}" for d in diagnostics]
    return "\n".join([error, "Static checks of the query:", *findings]) if findings else error


class Execute(Stage):
    """Runs each target's final SQL read-only, or takes the result an earlier stage got for the same SQL. The
    executor refuses anything but one SELECT (or WITH ... SELECT) statement; its reason is the record's error."""
    name = "execute"
    reads = ("targets",)
    writes = ("targets.result",)

    def __init__(self, catalog, config):
        self.catalog = catalog
        self.config = config

    def run(self, state):
        for target in state.targets:
            with state.trace.step(self.name, target) as step:
                _, reused = execution(self.catalog, target, self.config)
                step.decide(sql=target.sql, **outcome(target), **reuse_note(result=reused))
                if target.refused:
                    step.fail(target.error)


class SelfCorrect(LLMStage):
    """Repairs a query that failed to execute from SQLite's error message and the static inspector's findings, up to
    `self_correct_retries` times.
    Refused statements are not repaired: the executor said why, and the answer reports it."""
    name = "self_correct"
    group = "self_correction"
    reads = ("standalone_question", "targets.result")
    optional_reads = ("context",)
    writes = ("targets.sql", "targets.result")

    def run(self, state):
        for target in pending(state):
            for retry in range(1, self.config.self_correct_retries + 1):
                if target.result is None or target.ok or target.refused or not self.repair(state, target, retry):
                    break

    def repair(self, state, target, retry):
        """One repair and its execution; False when the LLM gave no usable query."""
        with state.trace.step(self.name, target) as step:
            step.on_failure()
            repaired = self.ask(step, "self_correct", parse_sql, self.sql_constraints(state, target.database),
                                schema=self.schema(state, target.database),
                                question=state.standalone_question, sql=target.sql,
                                error=diagnosed_error(self.catalog, target),
                                **self.dialect_fields(target.database))
            if repaired.strip() == target.sql.strip():  # the same query fails the same way: no retry helps
                step.decide(retry=retry, sql=repaired)
                step.fail("the repair repeats the query that failed")
                return False
            target.revise(self.name, repaired)
            _, reused = execution(self.catalog, target, self.config)
            step.decide(retry=retry, sql=repaired, **outcome(target), **reuse_note(result=reused))
            if target.refused:
                step.fail(target.error)
            return True
        return False  # the LLM gave no usable query
