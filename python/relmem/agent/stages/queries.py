"""What the stages learn about a target's SQL, computed once per SQL text and reused by every later stage that
needs it: the executor's verdict (rows, an SQL error, or a refusal) and the value memory's checks of its literals.
Each returns (what, reused) so that the trace can say which stage reused what."""
from ... import Error


def pending(state):
    """The targets still to be worked on: planned, and not refused by the executor."""
    return [t for t in state.targets if not t.refused]


def execution(catalog, target, config):
    """(relmem.QueryResult of the target's current SQL, reused). The executor is the only gate: anything but one
    read-only SELECT comes back refused (error_kind "refused") with the reason, and nothing runs."""
    result = target.executions.get(target.sql)
    if result is not None:
        return result, True
    result = catalog.execute(target.database, target.sql, timeout=config.timeout, max_rows=config.max_rows)
    target.executions[target.sql] = result
    return result, False


def value_checks(values, catalog, target, config, sql=None):
    """((checks, feedback), reused) of the target's current SQL (or of `sql`, an earlier revision) from the value
    memory's database retriever; raises relmem.Error (again, when reused) for SQL it cannot read."""
    sql = target.sql if sql is None else sql
    known = target.value_checks_by_sql.get(sql)
    reused = known is not None
    if not reused:
        try:
            known = values.check_values(sql, target.database, catalog, k=config.value_candidates)
        except Error as error:
            known = error
        target.value_checks_by_sql[sql] = known
    if isinstance(known, Error):
        raise known
    return known, reused


def reuse_note(**reused):
    """{"reused": [names]} of what a trace record took from an earlier stage; {} when nothing."""
    names = [name for name, was_reused in reused.items() if was_reused]
    return {"reused": names} if names else {}
