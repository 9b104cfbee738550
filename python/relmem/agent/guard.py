"""The gate in front of the executor: only one SELECT (or WITH ... SELECT) statement ever reaches it.

The executor itself is read-only (relmem.execute_readonly refuses writes); this gate refuses earlier, with a
message for the trace, and keeps anything else from being sent to SQLite at all.
"""
import re

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<quoted>'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
  | (?P<word>[A-Za-z_][A-Za-z_0-9$]*)
  | (?P<open>\()
  | (?P<close>\))
  | (?P<semicolon>;)
  | (?P<other>.)
""", re.S | re.X)


def refusal(sql):
    """None when `sql` is one SELECT or WITH ... SELECT statement, else why it is refused."""
    tokens = []
    for match in _TOKEN.finditer(sql):
        if match.lastgroup not in ("space", "comment"):
            tokens.append((match.lastgroup, match.group()))
    if tokens and tokens[-1][0] == "semicolon":
        tokens.pop()
    if not tokens:
        return "refused: the SQL is empty"
    if any(kind == "semicolon" for kind, _ in tokens):
        return "refused: only a single statement may run, and this text holds more than one"
    first = tokens[0][1].upper()
    if first == "WITH":
        first = _statement_after_ctes(tokens)
    if first != "SELECT":
        return f"refused: only SELECT (or WITH ... SELECT) statements may run, not {first[:40] or 'this'}"
    return None


def _statement_after_ctes(tokens):
    """The keyword of the statement a WITH clause introduces: the first top-level word after a CTE's ")"."""
    depth = 0
    after_close = False
    for kind, text in tokens[1:]:
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            after_close = depth == 0
            continue
        elif depth == 0 and kind == "word" and after_close and text.upper() != "AS":
            return text.upper()
        after_close = False
    return ""


def run_readonly(catalog, database, sql, timeout, max_rows):
    """(QueryResult or None, refusal or None): executes `sql` read-only unless the gate refuses it."""
    refused = refusal(sql)
    if refused:
        return None, refused
    return catalog.execute(database, sql, timeout=timeout, max_rows=max_rows), None
