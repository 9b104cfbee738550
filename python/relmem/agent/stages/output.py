"""The answer: the return-type decision, then the rows themselves or a text the LLM writes from them; and the
answer given when no LLM is configured."""
from ...parsers import RETURN_SQL_RESULT, RETURN_TEXT, parse_answer, parse_return_type
from ..tables import format_cell, format_table
from .base import LLMStage, Stage


def results_text(state, max_rows):
    """Each executed target for a prompt: goal, database, SQL and its rows (or its error)."""
    blocks = []
    for target in state.executed_targets():
        head = f"Query {target.index + 1} on database {target.database}" + (f" ({target.goal})" if target.goal else "")
        body = format_table(target.result.columns, target.result.rows, max_rows) if target.ok \
            else f"failed: {target.error}"
        blocks.append(f"{head}\nSQL: {target.sql}\nResult:\n{body}")
    return "\n\n".join(blocks)


def failures_answer(state):
    problems = "; ".join(f"the query on {t.database} failed ({t.error})" for t in state.targets if not t.ok)
    return f"could not answer: {problems}"


class ReturnType(LLMStage):
    """Whether the rows themselves answer the question (SQL) or a written answer is needed (TEXT)."""
    name = "return_type"
    group = "return_type"
    reads = ("standalone_question", "targets.result")
    writes = ("return_type",)

    def __init__(self, llm, config):
        super().__init__(llm, None, config)

    def run(self, state):
        if not any(t.ok for t in state.targets):
            return
        with state.trace.step(self.name) as step:
            state.return_type = RETURN_TEXT
            step.on_failure(return_type=RETURN_TEXT, fallback=True)
            state.return_type = self.ask(step, "return_type", parse_return_type, self.constraints("return_type"),
                                         question=state.standalone_question,
                                         results=results_text(state, self.config.answer_rows))
            step.decide(return_type=state.return_type)


class GenerateOutput(LLMStage):
    """The final answer: the result rows when they are the answer, else a text the LLM writes from the results."""
    name = "generate_output"
    reads = ("standalone_question", "targets.result")
    optional_reads = ("return_type",)
    writes = ("answer",)

    def __init__(self, llm, config):
        super().__init__(llm, None, config)

    def run(self, state):
        with state.trace.step(self.name) as step:
            if not any(t.ok for t in state.targets):
                step.decide(answer_from="failures")
                state.stop(failures_answer(state))
                return
            if state.return_type == RETURN_SQL_RESULT and sum(t.ok for t in state.targets) == 1:
                target = next(t for t in state.targets if t.ok)
                step.decide(answer_from="sql_result")
                state.stop(rows_answer(target.result.columns, target.result.rows, self.config.answer_rows))
                return
            step.on_failure(lambda failure: state.stop(f"could not write an answer ({failure.reason}); the query "
                                                       "results are:\n" + results_text(state, self.config.answer_rows)),
                            answer_from="results", fallback=True)
            answer = self.ask(step, "generate_output", parse_answer, self.constraints("answer"),
                              question=state.standalone_question,
                              results=results_text(state, self.config.answer_rows))
            step.decide(answer_from="llm", answer=answer)
            state.stop(answer)


def rows_answer(columns, rows, max_rows):
    """A single value as itself, anything larger as a table."""
    if len(rows) == 1 and len(columns) == 1:
        return format_cell(rows[0][0])
    return format_table(columns, rows, max_rows)


class DescribeWithoutLLM(Stage):
    """The answer when no LLM is configured: what the LLM-free stages found, and what to configure."""
    name = "no_llm"
    reads = ("candidates",)
    optional_reads = ("question_values",)
    writes = ("answer",)

    def run(self, state):
        with state.trace.step(self.name) as step:
            lines = ["No LLM is configured, so relmem cannot write SQL or an answer (pass --llm-base-url and "
                     "--llm-model, or set RELMEM_LLM_BASE_URL and RELMEM_LLM_MODEL).",
                     "Most relevant databases: " + ", ".join(f"{c.database} (p={c.probability:.2f})"
                                                           for c in state.candidates)]
            for database, links in state.question_values.items():
                found = ", ".join(f"'{link.span}' -> {link.table}.{link.column} = '{link.value}'" for link in links)
                lines.append(f"Stored values in {database}: {found}")
            if not state.question_values:
                lines.append("No stored values match words of the question.")
            step.decide(answer_from="llm_free_stages")
            state.stop("\n".join(lines))
