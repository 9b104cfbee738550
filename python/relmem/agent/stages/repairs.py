"""Columns qualified by the wrong FROM item, repaired without an LLM before any query runs."""
from ... import Error
from ... import sql as sqltools
from .base import Stage
from .queries import pending


class RepairQualifiers(Stage):
    """Rewrites "T2.weight" as "T1.weight" in each target's SQL when T2 lacks the column and exactly one other FROM
    item of the same SELECT has it (relmem.sql.repair_qualifiers); every other byte of the SQL stays as written.
    SQL the parser cannot read is left to execution and self-correction."""
    name = "repair_qualifiers"
    reads = ("targets",)
    writes = ("targets.sql",)

    def __init__(self, catalog):
        self.catalog = catalog

    def run(self, state):
        for target in pending(state):
            with state.trace.step(self.name, target) as step:
                try:
                    repair = sqltools.repair_qualifiers(target.sql, self.catalog, target.database)
                except Error as error:
                    step.skip(f"unreadable SQL: {error}")
                    continue
                step.decide(repairs=[{"column": fix.column, "qualifier": fix.original, "replacement": fix.replacement,
                                      "start": fix.start, "end": fix.end} for fix in repair.repairs])
                if repair.repairs:
                    step.decide(sql=repair.sql)
                    target.revise(self.name, repair.sql)
