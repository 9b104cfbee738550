"""What every stage is: a named object that reads and updates the question's State; and what every stage that asks
the LLM shares."""
from ...contracts import CONTRACTS
from ...engines.catalog import engine_of
from ...engines.dialects import sql_prompt_fields
from ...prompt_templates import render_prompt
from ..schemas import database_schema, shown_columns


class Stage:
    """A pipeline stage. `name` names it: its trace records and the LLM calls it makes carry this name (the LLM
    layer passes it on as X-Relmem-Stage). `group` is the switch that turns it off (see SWITCHES).

    `reads` and `writes` declare the State fields it uses and changes ("targets.<field>" for a field of each
    QueryTarget; "targets" stands for all of them). The pipeline refuses a stage whose reads neither State.INPUTS
    nor an earlier stage's writes provide; `optional_reads` are used when an earlier stage wrote them.

    run(state) updates the state and records what it did with `state.trace.step(...)`. A stage that cannot go on
    with the question calls state.stop(answer); an exception it lets escape stops the question too (the pipeline
    records it and answers "could not answer: ...").
    """
    name = ""
    group = None
    reads = ()
    optional_reads = ()
    writes = ()

    def run(self, state):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class LLMStage(Stage):
    """A stage that asks the LLM about the databases of `catalog` (None for stages that show no schema).

    ask() sends a prompt of relmem/prompts (its name and fields, or messages already rendered) and returns the reply
    as `parse` reads it (StageFailure when the LLM gave nothing usable); schema() is a database as the prompts that
    correct SQL show it."""

    def __init__(self, llm, catalog, config, descriptions=None):
        self.llm = llm
        self.catalog = catalog
        self.config = config
        self.descriptions = descriptions or {}

    def ask(self, step, prompt, parse, constraints=None, reminder=None, **fields):
        """`constraints`: chat() keywords that constrain decoding (see constraints()); {} or None for none.
        `reminder`: the format reminder of a malformed reply, when not the output contract's."""
        messages = render_prompt(prompt, **fields) if isinstance(prompt, str) else prompt
        extra = {"reminder": reminder} if reminder else {}
        return step.ask(self.llm, messages, parse, temperature=self.config.temperature, **extra, **(constraints or {}))

    def constraints(self, contract, **context):
        """The grammar (or JSON schema) of output contract `contract` for `context`, when the pipeline constrains
        decoding (config.constrained); else {}."""
        return CONTRACTS[contract].constraints(**context) if self.config.constrained else {}

    def sql_constraints(self, state, database):
        """Constraints for one SQL query on `database`: its reply form in the database's dialect, naming only what
        the prompt shows."""
        return self.constraints("sql", schema=shown_columns(state, self.catalog, database),
                                dialect=engine_of(self.catalog, database))

    def dialect_fields(self, database):
        """The prompt slots naming the engine and dialect of `database` (relmem.engines.dialects)."""
        return sql_prompt_fields(self.catalog, database)

    def schema(self, state, database):
        return database_schema(state, self.catalog, database, self.descriptions)
