"""Read-only execution of each target, and self-correction of the ones SQLite could not run."""
from ...parsers import StageFailure, parse_sql
from ...prompt_templates import render_prompt
from ..guard import run_readonly
from ..schemas import schema_text
from .base import Stage, llm_params
from .values import pending


def execute(catalog, target, config):
    """Runs the target's current SQL unless its result is already there; refusals are kept on the target."""
    if target.executed_sql == target.sql and target.result is not None:
        return True
    result, refused = run_readonly(catalog, target.database, target.sql, config.timeout, config.max_rows)
    target.result, target.executed_sql, target.refused = result, target.sql, refused
    return False


def _outcome(target):
    if target.refused:
        return {"refused": target.refused}
    if not target.result.ok:
        return {"error": target.error}
    return {"columns": list(target.result.columns), "rows": len(target.result.rows),
            "truncated": target.result.truncated}


class Execute(Stage):
    """Runs each target's final SQL read-only; anything but one SELECT/WITH statement is refused, not run."""
    name = "execute"

    def __init__(self, catalog, config):
        self.catalog = catalog
        self.config = config

    def run(self, state):
        for target in pending(state):
            with state.trace.step(self.name, target) as step:
                reused = execute(self.catalog, target, self.config)
                step.decide(sql=target.sql, reused_inspection_result=reused, **_outcome(target))
                if target.refused:
                    step.fail(target.refused)


class SelfCorrect(Stage):
    """Repairs a query that failed to execute from SQLite's error message, up to `self_correct_retries` times."""
    name = "self_correct"
    group = "self_correction"

    def __init__(self, llm, catalog, config, descriptions=None):
        self.llm = llm
        self.catalog = catalog
        self.config = config
        self.descriptions = descriptions or {}

    def run(self, state):
        for target in pending(state):
            for retry in range(1, self.config.self_correct_retries + 1):
                if target.result is None or target.ok or target.refused or not self.repair(state, target, retry):
                    break

    def repair(self, state, target, retry):
        """One repair and its execution; False when the LLM gave no usable query."""
        with state.trace.step(self.name, target) as step:
            messages = render_prompt(
                "self_correct", schema=schema_text(self.catalog, target.database,
                                                   self.descriptions.get(target.database, "")),
                question=state.standalone_question, sql=target.sql, error=target.result.error)
            try:
                repaired = step.ask(self.llm, messages, parse_sql, **llm_params(self.config))
            except StageFailure as failure:
                step.fail(failure)
                return False
            target.revise(self.name, repaired)
            execute(self.catalog, target, self.config)
            step.decide(retry=retry, sql=repaired, **_outcome(target))
            if target.refused:
                step.fail(target.refused)
            return True
