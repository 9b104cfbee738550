"""Query results as JSON: every value keeps its type. Text, numbers and NULL are JSON's own; a blob becomes
{"$blob": "<base64>", "length": <bytes>}, never Python's b'...' text."""
import base64


def json_value(value):
    """A JSON-ready form of one SQL value (int, float, str, None or bytes)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return {"$blob": base64.b64encode(data).decode("ascii"), "length": len(data)}
    return value


def json_rows(rows):
    return [[json_value(v) for v in row] for row in rows]


def json_default(value):
    """For json.dumps(default=...): blobs as typed values, anything else by its str()."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return json_value(value)
    return str(value)


def text_value(value, max_chars=200):
    """A value as one table cell: NULL, x'0a1b...' (with its length) for a blob, text shortened to max_chars."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        shown = data[:max_chars // 2].hex()
        return f"x'{shown}{'...' if len(data) > max_chars // 2 else ''}' ({len(data)} bytes)"
    text = str(value)
    return text if len(text) <= max_chars else text[:max_chars] + "..."
