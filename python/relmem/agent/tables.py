"""Plain-text tables of query results."""


def format_cell(value):
    """A cell as text. A float shows 15 significant digits, the most a decimal keeps through a double, so that an
    average computed as 2.6999999999999997 reads 2.7."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, float):
        return repr(float(format(value, ".15g")))
    return str(value)


def format_table(columns, rows, max_rows=50):
    """Columns and rows as aligned text; rows beyond `max_rows` are counted, not shown."""
    shown = [[format_cell(v) for v in row] for row in rows[:max_rows]]
    widths = [max([len(str(c))] + [len(r[i]) for r in shown]) for i, c in enumerate(columns)]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in shown]
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more rows")
    if not rows:
        lines.append("(no rows)")
    return "\n".join(lines)
