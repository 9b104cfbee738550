"""What a server engine hands back: the same surface as relmem.QueryResult (columns, rows, truncated, ok, error,
error_kind, raise_for_error), with values as the SQLite executor gives them: int, float, str, bytes or None."""
import dataclasses
import datetime
import decimal
import json
import uuid

from .. import SqlError

# The error kinds of relmem.QueryResult.error_kind.
REFUSED, PREPARE, RUNTIME, TIMEOUT, TOO_LARGE, OPEN = "refused", "prepare", "runtime", "timeout", "too_large", "open"


@dataclasses.dataclass
class EngineResult:
    columns: list = dataclasses.field(default_factory=list)
    rows: list = dataclasses.field(default_factory=list)
    truncated: bool = False
    error: str = None
    error_kind: str = None

    @property
    def ok(self):
        return self.error is None

    def raise_for_error(self):
        if self.error is not None:
            raise SqlError(f"{self.error_kind}: {self.error}")

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return f"EngineResult(error={self.error})" if self.error else f"EngineResult({len(self.rows)} rows)"


def failure(kind, message):
    return EngineResult(error=" ".join(str(message).split()), error_kind=kind)


def plain_value(value):
    """A driver's value as SQLite would hold it: numbers stay numbers (an integral NUMERIC becomes an int), dates
    and times become ISO text, booleans 0/1, JSON its text, byte buffers bytes."""
    if value is None or isinstance(value, (int, float, str, bytes)) and not isinstance(value, bool):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and value == value.to_integral_value() and value.as_tuple().exponent >= 0:
            return int(value)
        return float(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (datetime.timedelta, uuid.UUID)):
        return str(value)
    return str(value)


def value_bytes(value):
    """The size a value counts for in the byte cap: text and blob bytes, 8 for anything else (as the SQLite
    executor counts)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes):
        return len(value)
    return 8


def collect_rows(fetch_batch, max_rows, max_bytes):
    """(rows, truncated) read through `fetch_batch(n)` (a driver cursor's fetchmany) until max_rows rows; raises
    ResultTooLarge past max_bytes."""
    rows, size = [], 0
    while len(rows) <= max_rows:
        batch = fetch_batch(min(1000, max_rows + 1 - len(rows)))
        if not batch:
            return rows, False
        for raw in batch:
            row = tuple(plain_value(v) for v in raw)
            size += sum(value_bytes(v) for v in row)
            if size > max_bytes:
                raise ResultTooLarge(f"the result is larger than {max_bytes} bytes")
            rows.append(row)
    return rows[:max_rows], True


class ResultTooLarge(Exception):
    pass
