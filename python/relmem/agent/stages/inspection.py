"""Tool-SQL inspection and refinement: a database retriever and an error detector look at each query and its
result; when they report problems the LLM refines the query, for up to N rounds."""
import re

from ... import Error
from ... import sql as sqltools
from ...parsers import parse_sql
from .base import LLMStage
from .queries import execution, pending, reuse_note, value_checks

NO_RETRIEVER = "The database retriever is not available (no value memory)."
ALL_GOOD = "No problems found."
# All but 9 of the 892 train_spider.json questions whose gold query returns only counts have one of these words; a
# comparison of quantities ("Are there more hospitals or more restaurants?") asks for counts too.
COUNT_WORDS = re.compile(r"\b(how many|numbers? of|counts?|total)\b|\b(more|fewer|less)\b.*\bor\b", re.IGNORECASE)
# The wording the local model followed most often, of four (scripts/count_refine_messages.py on train questions).
COUNTS_UNASKED = ("error: the question asks which rows, not how many; select the columns that identify those rows "
                  "(such as their names) instead of COUNT(*).")


def counts_unasked(question, sql):
    """True when the query returns only counts and the question has no word that asks for one."""
    if COUNT_WORDS.search(question):
        return False
    try:
        return sqltools.parse(sql).counts_only
    except Error:
        return False


class InspectAndRefine(LLMStage):
    """Per target, up to `refine_rounds` times: run the query read-only, collect the retriever's and the detector's
    feedback, and let the LLM refine the query when either reports a problem. Queries that fail to execute are
    left to self-correction, which gets SQLite's error message. Its records are "inspect" (no LLM) and "refine"."""
    name = "refine"
    group = "refinement"
    reads = ("standalone_question", "targets")
    optional_reads = ("context",)
    writes = ("targets.sql", "targets.result", "targets.value_checks")

    def __init__(self, llm, catalog, config, values=None, descriptions=None):
        super().__init__(llm, catalog, config, descriptions)
        self.values = values

    def run(self, state):
        for target in pending(state):
            for round_ in range(self.config.refine_rounds + 1):
                feedback = self.inspect(state, target)
                if feedback is None or round_ == self.config.refine_rounds or not self.refine(state, target, feedback):
                    break

    def inspect(self, state, target):
        """(retriever feedback, detector feedback) when something calls for refinement, else None."""
        with state.trace.step("inspect", target) as step:
            result, reused = execution(self.catalog, target, self.config)
            if target.refused:
                step.decide(refused=target.error, action="left to execution", **reuse_note(result=reused))
                return None
            if not result.ok:
                step.decide(execution_error=target.error, action="left to self-correction",
                            **reuse_note(result=reused))
                return None
            retriever, value_problems, checks_reused = self.retrieve(target)
            detector, problems = self.detect(state.standalone_question, target, result)
            step.decide(rows=len(result.rows), retriever=retriever, detector=detector,
                        action="refine" if value_problems or problems else "keep",
                        **reuse_note(result=reused, value_checks=checks_reused))
            return (retriever, detector) if value_problems or problems else None

    def retrieve(self, target):
        """(feedback text, whether some value is not stored as written, whether the checks were reused)."""
        if self.values is None:
            return NO_RETRIEVER, False, False
        try:
            (_, feedback), reused = value_checks(self.values, self.catalog, target, self.config)
        except Error as error:
            return f"The retriever could not read the query: {error}", False, False
        return feedback or "Every value of the query's conditions is stored as written.", bool(feedback), reused

    def detect(self, question, target, result):
        """(feedback text, whether a problem calls for refinement): static diagnostics plus checks of the result and
        of its shape against the question. Errors and suspicious results call for refinement; warnings are passed on
        as hints only."""
        lines, problems = [], False
        for diagnostic in sqltools.inspect(target.sql, self.catalog, target.database):
            if diagnostic.kind == "syntax":  # SQLite ran it: a construct relmem's parser does not know
                continue
            lines.append(f"{diagnostic.severity}: {diagnostic.message}")
            problems |= diagnostic.severity == "error"
        if not result.rows:
            lines.append("error: the query returned no rows.")
            problems = True
        else:
            for i, column in enumerate(result.columns):
                if all(row[i] is None for row in result.rows):
                    lines.append(f"error: column {column} is NULL in every row of the result.")
                    problems = True
        if counts_unasked(question, target.sql):
            lines.append(COUNTS_UNASKED)
            problems = True
        return "\n".join(lines) or ALL_GOOD, problems

    def refine(self, state, target, feedback):
        """Asks the LLM for a refined query; True when it changed the query."""
        retriever, detector = feedback
        with state.trace.step(self.name, target) as step:
            step.on_failure(kept=target.sql)
            refined = self.ask(step, "refine", parse_sql, self.sql_constraints(state, target.database),
                               schema=self.schema(state, target.database),
                               question=state.standalone_question, sql=target.sql, retriever_feedback=retriever,
                               detector_feedback=detector, **self.dialect_fields(target.database))
            changed = refined != target.sql
            step.decide(sql=refined, changed=changed)
            target.revise(self.name, refined)
            return changed
        return False  # the LLM gave no usable query
