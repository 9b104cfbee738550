"""Plain JSON views of what relmem's memories and inspector return (DatabaseMatch, ValueMatch, ValueLink,
ValueCheck, ColumnValues, Diagnostic), and of result values. The only module of the MCP server that reads those
result objects."""
import math


def _number(value):
    return round(float(value), 4)


def database_match(match):
    return {"database": match.database, "score": _number(match.score), "probability": _number(match.probability)}


def _evidence(components):
    """The evidence kinds of a MatchComponents that have a score (semantic is None for values without vectors)."""
    scores = {name: getattr(components, name) for name in dir(components) if not name.startswith("_")}
    return {name: _number(v) for name, v in scores.items() if isinstance(v, (int, float))}


def value_match(match):
    return {"value": match.value, "score": _number(match.score), "table": match.table, "column": match.column,
            "evidence": _evidence(match.components)}


def value_link(link):
    return {**value_match(link), "span": link.span, "start": link.start, "end": link.end}


def value_check(check):
    return {"table": check.table, "column": check.column, "op": check.op, "value": check.value,
            "start": check.start, "end": check.end, "status": check.status, "case_matches": list(check.case_matches),
            "similar": [value_match(m) for m in check.similar]}


def diagnostic(item):
    return {"severity": item.severity, "kind": item.kind, "message": item.message, "start": item.start,
            "end": item.end}


def indexed_columns(values, db):
    """(table, column) of every column the value memory indexed text values for."""
    return [(c.table, c.column) for c in values.columns(db) if c.indexed_values > 0]


def cell(value, max_chars):
    """One result value as JSON: blobs as x'hex' (long ones summarized), non-finite floats as strings, long text
    cut to max_chars."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return f"x'{data.hex()}'" if len(data) <= 64 else f"<blob of {len(data)} bytes, x'{data[:32].hex()}...'>"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > max_chars:
        return value[:max_chars] + f"... [{len(value) - max_chars} more characters]"
    return value
