"""SQL analysis for the SQLite dialect of Spider and BIRD (implemented in C++, ``relmem._relmem.sql``).

    q = relmem.sql.parse(sql, catalog, "concert_singer")   # or parse(sql) / parse(sql, schema)
    q.conditions      # [Condition(singer.country = 'France' @41:49)]: table, column, op, literal, literal_index,
    #                   the spans of the literal, the column and the whole comparison
    q.tables          # base tables read, in order of appearance
    q.literals        # every literal: index, kind, value, start, end
    q.render()        # the syntax tree written back as SQL
    relmem.sql.rewrite_literals(sql, {0: "FR"})             # splice new values, keep the rest of the text
    relmem.sql.inspect(sql, catalog, "concert_singer")      # [Diagnostic(error unknown_column @7:10: ...)]
    relmem.sql.repair_qualifiers(sql, catalog, "pets_1")    # .sql: "T2.weight" -> "T1.weight" when only T1 has
    #                                                         weight; .repairs: [QualifierFix(T2.weight -> ...)]
    relmem.sql.repair_joins(sql, catalog, "car_1")          # "SELECT model FROM cars_data" -> "... FROM cars_data
    #                                                         JOIN car_names ON cars_data.Id = car_names.MakeId"
    relmem.sql.repair_counts(sql, catalog, "dog_kennels")   # "SELECT first_name FROM Owners ORDER BY count(*)" ->
    #                                                         "... JOIN Dogs ON ... GROUP BY Owners.owner_id ..."

SQL that does not parse raises ``SqlSyntaxError`` (a ``relmem.Error`` with ``.offset``); ``inspect`` reports it as a
``syntax`` diagnostic instead.
"""
from ._relmem import sql as _core

Condition = _core.Condition
CountFix = _core.CountFix
CountRepair = _core.CountRepair
Diagnostic = _core.Diagnostic
Literal = _core.Literal
JoinFix = _core.JoinFix
JoinRepair = _core.JoinRepair
QualifierFix = _core.QualifierFix
QualifierRepair = _core.QualifierRepair
Query = _core.Query
SqlSyntaxError = _core.SqlSyntaxError
inspect = _core.inspect
parse = _core.parse
repair_counts = _core.repair_counts
repair_joins = _core.repair_joins
repair_qualifiers = _core.repair_qualifiers
rewrite_literals = _core.rewrite_literals

__all__ = ["Condition", "CountFix", "CountRepair", "Diagnostic", "JoinFix", "JoinRepair", "Literal", "QualifierFix",
           "QualifierRepair", "Query", "SqlSyntaxError", "inspect", "parse", "repair_counts", "repair_joins",
           "repair_qualifiers", "rewrite_literals"]
