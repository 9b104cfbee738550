"""Static repairs of the planned SQL, without an LLM, before any query runs: columns qualified by the wrong FROM
item, columns of a table missing from FROM, and counts that can only be one row per row."""
from ... import Error
from ... import sql as sqltools
from .base import Stage
from .queries import pending


class StaticRepair(Stage):
    """Rewrites each target's SQL with `repair` (a relmem.sql function: (sql, catalog, db) -> .sql, .repairs), every
    other byte of it staying as written. SQL the parser cannot read is left to execution and self-correction."""
    reads = ("targets",)
    writes = ("targets.sql",)

    def __init__(self, catalog):
        self.catalog = catalog

    def repair(self, sql, database):
        raise NotImplementedError

    def describe(self, fix):
        raise NotImplementedError

    def run(self, state):
        for target in pending(state):
            with state.trace.step(self.name, target) as step:
                try:
                    repair = self.repair(target.sql, target.database)
                except Error as error:
                    step.skip(f"unreadable SQL: {error}")
                    continue
                step.decide(repairs=[self.describe(fix) for fix in repair.repairs])
                if repair.repairs:
                    step.decide(sql=repair.sql)
                    target.revise(self.name, repair.sql)


class RepairQualifiers(StaticRepair):
    """"T2.weight" becomes "T1.weight" when T2 lacks the column and exactly one other FROM item of the same SELECT has
    it (relmem.sql.repair_qualifiers)."""
    name = "repair_qualifiers"

    def repair(self, sql, database):
        return sqltools.repair_qualifiers(sql, self.catalog, database)

    def describe(self, fix):
        return {"column": fix.column, "qualifier": fix.original, "replacement": fix.replacement, "start": fix.start,
                "end": fix.end}


class RepairJoins(StaticRepair):
    """"SELECT model FROM cars_data" gets "JOIN car_names ON cars_data.Id = car_names.MakeId" when car_names is the
    one table with the column that a foreign key links to the FROM clause, by one key (relmem.sql.repair_joins)."""
    name = "repair_joins"

    def repair(self, sql, database):
        return sqltools.repair_joins(sql, self.catalog, database)

    def describe(self, fix):
        return {"column": fix.column, "table": fix.table, "clause": fix.clause.strip(), "position": fix.position}


class RepairCounts(StaticRepair):
    """"SELECT first_name FROM Owners ORDER BY count(*) DESC LIMIT 1" gets "JOIN Dogs ON Owners.owner_id =
    Dogs.owner_id GROUP BY Owners.owner_id" when Dogs is the one table whose foreign key references Owners
    (relmem.sql.repair_counts)."""
    name = "repair_counts"

    def repair(self, sql, database):
        return sqltools.repair_counts(sql, self.catalog, database)

    def describe(self, fix):
        return {"table": fix.table, "clause": fix.clause.strip(), "group_by": fix.group_by.strip()}
