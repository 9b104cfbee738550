"""The schema context the SQL-writing prompts show: built per question from the candidates (ContextBuilder)."""
from .base import Stage


class BuildContext(Stage):
    """The candidates' tables, columns, example rows and linked values that matter for the question, within the token
    budget (or their full DDL with PipelineConfig.context = "full_ddl"). The trace records what was kept."""
    name = "build_context"
    reads = ("standalone_question", "candidates")
    writes = ("context",)

    def __init__(self, builder):
        self.builder = builder

    def run(self, state):
        with state.trace.step(self.name) as step:
            state.context = self.builder.build(state.standalone_question, [c.database for c in state.candidates],
                                               [c.score for c in state.candidates])
            step.decide(**state.context.to_dict(), text=state.context.text)
