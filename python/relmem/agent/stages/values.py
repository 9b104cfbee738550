"""The value memory at work on each target's SQL: link its string literals to stored values, let the LLM correct
them from those candidates, and post-process what is still not stored without an LLM."""
from ... import Error
from ...parsers import parse_sql
from ... import sql as sqltools
from .base import LLMStage, Stage
from .queries import pending, reuse_note, value_checks


def _column(check):
    return f"{check.table}.{check.column}"


def _check_summary(check):
    summary = {"value": check.value, "column": _column(check), "op": check.op, "status": check.status}
    if check.case_matches:
        summary["stored"] = check.case_matches
    if check.similar:
        summary["similar"] = [{"value": c.value, "score": round(c.score, 4), "channel": c.channel}
                              for c in check.similar]
    return summary


def needs_correction(check):
    return check.status != "found" and bool(check.case_matches or check.similar)


class ValueMemoryStage(Stage):
    """A stage that checks the string literals of a target's SQL with the value memory (`values`)."""
    group = "value_memory"

    def __init__(self, values, catalog, config):
        self.values = values
        self.catalog = catalog
        self.config = config

    def checks(self, target, sql=None):
        """(the literals' checks of the target's current SQL or of `sql`, reused); relmem.Error for unreadable SQL."""
        (checks, _), reused = value_checks(self.values, self.catalog, target, self.config, sql)
        return checks, reused


class LinkValues(ValueMemoryStage):
    """Checks the string literals of each target's SQL against the database; finds similar stored values for those
    that are not stored as written."""
    name = "link_values"
    reads = ("targets",)
    writes = ("targets.value_checks",)

    def run(self, state):
        for target in pending(state):
            with state.trace.step(self.name, target) as step:
                try:
                    checks, reused = self.checks(target)
                except Error as error:  # SQL that does not parse: left to execution and self-correction
                    step.fail(error)
                    continue
                step.decide(literals=[_check_summary(c) for c in checks], **reuse_note(value_checks=reused))


class CorrectValues(LLMStage):
    """The LLM replaces string literals by the stored values they mean, given the linked candidates. Its query is
    taken only when nothing but string literals changed."""
    name = "correct_values"
    group = "value_memory"
    reads = ("standalone_question", "targets.value_checks")
    optional_reads = ("context",)
    writes = ("targets.sql",)

    def run(self, state):
        for target in pending(state):
            if not any(needs_correction(c) for c in target.value_checks):
                continue
            with state.trace.step(self.name, target) as step:
                step.on_failure(kept=target.sql)
                corrected = self.ask(step, "correct_values", parse_sql, self.sql_constraints(state, target.database),
                                     schema=self.schema(state, target.database),
                                     question=state.standalone_question, sql=target.sql,
                                     candidates=candidates_text(target.value_checks),
                                     **self.dialect_fields(target.database))
                problem = literal_only_change(target.sql, corrected)
                if problem:
                    step.decide(rejected=corrected, reason=problem, kept=target.sql)
                    continue
                step.decide(sql=corrected, changed=corrected != target.sql)
                target.revise(self.name, corrected)


class PostProcessValues(ValueMemoryStage):
    """Without an LLM: a literal its column does not store is replaced by the stored value it most likely means,
    when that match is confident (relmem's value post-processing); compared with a foreign key whose referenced
    table stores it as written, the comparison becomes a lookup of the keys. SQL whose literals are all stored as
    written is left alone without asking the value memory again."""
    name = "postprocess_values"
    reads = ("targets",)
    writes = ("targets.sql", "targets.value_checks")

    def run(self, state):
        for target in pending(state):
            with state.trace.step(self.name, target) as step:
                try:
                    checks, reused = self.checks(target)
                    if all(check.status == "found" for check in checks):
                        step.decide(replacements=[], **reuse_note(value_checks=reused))
                        continue
                    corrected = self.values.correct_values(target.sql, target.database, self.catalog)
                except Error as error:
                    step.fail(error)
                    continue
                replaced = [{"value": r.value, "column": _column(r), "replacement": r.replacement,
                             "reason": r.reason, "channel": r.channel, "score": round(r.score, 4)}
                            for r in corrected.replacements]
                lookups = [{"value": k.value, "column": _column(k), "key": f"{k.lookup_table}.{k.key}",
                            "where": f"{k.lookup_table}.{k.lookup_column}"} for k in corrected.lookups]
                step.decide(replacements=replaced, **({"lookups": lookups} if lookups else {}),
                            **reuse_note(value_checks=reused))
                target.revise(self.name, corrected.sql)


class LearnValues(ValueMemoryStage):
    """Keeps what the LLM's value correction taught: when it replaced a literal its column does not store by one
    it stores and the query then returned rows, the value memory keeps that mapping as an alias for that column
    (found first on the next lookup; saved with the memory)."""
    name = "learn_values"
    reads = ("targets.result",)
    writes = ("targets.value_checks",)  # the checks of the SQL before and after the correction, when new

    def run(self, state):
        for target in state.targets:
            corrections = [(i, sql) for i, (stage, sql) in enumerate(target.revisions) if stage == CorrectValues.name]
            if not corrections or not target.ok or not target.result.rows:
                continue
            i, corrected = corrections[-1]
            before = target.revisions[i - 1][1] if i > 0 else target.planned_sql
            if not _same_literals(corrected, target.sql):
                continue  # a later stage changed the values: the rows do not confirm the correction
            with state.trace.step(self.name, target) as step:
                try:
                    before_checks, before_reused = self.checks(target, before)
                    after_checks, after_reused = self.checks(target, corrected)
                    learned = self.values.learn_from_correction(
                        target.database, self.catalog, before, corrected,
                        evidence=f"{state.standalone_question} | {before} -> {corrected}",
                        before_checks=before_checks, after_checks=after_checks)
                except Error as error:
                    step.fail(error)
                    continue
                step.decide(learned=[{"column": f"{a.table}.{a.column}", "written": a.written, "stored": a.stored,
                                      "uses": a.uses} for a in learned],
                            **reuse_note(value_checks=before_reused and after_reused))


def _same_literals(a, b):
    try:
        return [x.value for x in sqltools.parse(a).literals] == [x.value for x in sqltools.parse(b).literals]
    except Error:
        return False


def candidates_text(checks):
    lines = []
    for check in checks:
        head = f"'{check.value}' ({_column(check)} {check.op})"
        if check.status == "found":
            lines.append(f"{head}: stored as written")
        elif check.case_matches:
            lines.append(f"{head}: stored as " + ", ".join(f"'{v}'" for v in check.case_matches))
        elif check.similar:
            lines.append(f"{head}: " + ", ".join(f"'{c.value}'" for c in check.similar))
        else:
            lines.append(f"{head}: no similar stored value")
    return "\n".join(lines)


def literal_only_change(before, after):
    """None when `after` differs from `before` at most in its string literals, else what else changed."""
    try:
        skeletons = [_skeleton(before), _skeleton(after)]
    except Error as error:
        return f"the corrected SQL does not parse: {error}"
    if skeletons[0] != skeletons[1]:
        return "the corrected SQL changes more than string literals"
    return None


def _skeleton(sql):
    """The query written afresh with every string literal emptied."""
    query = sqltools.parse(sql)
    blanks = {literal.index: "" for literal in query.literals if literal.kind == "string"}
    return sqltools.parse(query.rewrite_literals(blanks)).render() if blanks else query.render()
