"""Plain JSON views of what relmem's memories, inspector and executor return. The only module of the MCP server
that reads their result objects: items are read by attribute, or by key where a result is still a dict."""
import math
from collections.abc import Mapping


def _get(item, name, default=None):
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def _number(value):
    return round(float(value), 4)


def database_match(match):
    return {"database": _get(match, "database"), "score": _number(_get(match, "score")),
            "probability": _number(_get(match, "probability"))}


def value_match(match):
    components = _get(match, "components") or {}
    if not isinstance(components, Mapping):
        components = {name: _get(components, name) for name in dir(components) if not name.startswith("_")}
    return {"value": _get(match, "value"), "score": _number(_get(match, "score")), "table": _get(match, "table"),
            "column": _get(match, "column"),
            "evidence": {name: _number(v) for name, v in components.items() if isinstance(v, (int, float))}}


def value_link(link):
    view = value_match(link)
    view.update(span=_get(link, "span"), start=_get(link, "start"), end=_get(link, "end"))
    return view


def value_check(check):
    return {"table": _get(check, "table"), "column": _get(check, "column"), "op": _get(check, "op"),
            "value": _get(check, "value"), "start": _get(check, "start"), "end": _get(check, "end"),
            "status": _get(check, "status"), "case_matches": list(_get(check, "case_matches") or []),
            "similar": [value_match(m) for m in _get(check, "similar") or []]}


def diagnostic(item):
    return {"severity": _get(item, "severity"), "kind": _get(item, "kind"), "message": _get(item, "message"),
            "start": _get(item, "start"), "end": _get(item, "end")}


def indexed_columns(values, db):
    """(table, column) of every column the value memory indexed text values for."""
    return [(_get(c, "table"), _get(c, "column")) for c in values.columns(db) if (_get(c, "indexed_values") or 0) > 0]


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
