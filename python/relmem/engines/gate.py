"""The static gate of the server engines: a statement reaches the server only when sqlglot reads it, in the
engine's dialect, as one SELECT (CTEs and set operations allowed) that writes nothing, locks nothing, and calls no
function with effects outside the query. The server's read-only transaction stays the real guard; the gate refuses
early, with the reason, what that transaction might let through (sleeps, advisory locks, file reads, sequences).

    tree = check_statement("SELECT ...", "postgres")   # or raises Refused("stacked statements: ...")
"""
import logging

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" notes: the gate says why

SQLGLOT_DIALECTS = {"postgresql": "postgres", "mysql": "mysql"}

# Functions refused by name (lowercase); a name starting with one of BLOCKED_PREFIXES is refused too.
BLOCKED_FUNCTIONS = {
    # PostgreSQL: files, large objects, sessions, settings, sequences, sleeps, queries run from a string
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_file_write", "lo_import", "lo_export",
    "lo_create", "lo_creat", "lo_unlink", "lo_put", "lo_from_bytea", "set_config", "pg_terminate_backend",
    "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_switch_wal", "pg_promote",
    "pg_create_restore_point", "pg_notify", "pg_logical_emit_message", "nextval", "setval", "pg_sleep",
    "pg_sleep_for", "pg_sleep_until", "query_to_xml", "query_to_xml_and_xmlschema", "query_to_xmlschema",
    "cursor_to_xml", "txid_current", "pg_current_xact_id",
    # MySQL / MariaDB: files, sleeps, user locks, replication waits, user-defined shells
    "load_file", "sleep", "benchmark", "get_lock", "release_lock", "release_all_locks", "is_free_lock",
    "is_used_lock", "master_pos_wait", "source_pos_wait", "master_gtid_wait", "sys_exec", "sys_eval",
}
BLOCKED_PREFIXES = ("dblink", "pg_advisory_", "pg_try_advisory_", "pg_ls_", "pg_read_")

# Statement kinds that write, lock, change the session or run something else than a query.
REFUSED_NODES = {
    exp.Insert: "INSERT", exp.Update: "UPDATE", exp.Delete: "DELETE", exp.Merge: "MERGE", exp.Create: "CREATE",
    exp.Drop: "DROP", exp.Alter: "ALTER", exp.TruncateTable: "TRUNCATE", exp.Command: "a command",
    exp.Commit: "COMMIT", exp.Rollback: "ROLLBACK", exp.Transaction: "a transaction statement", exp.Set: "SET",
    exp.Copy: "COPY", exp.LoadData: "LOAD DATA", exp.Into: "SELECT ... INTO", exp.Lock: "a row lock (FOR UPDATE/SHARE)",
    exp.Use: "USE", exp.Pragma: "PRAGMA", exp.Grant: "GRANT", exp.Revoke: "REVOKE", exp.Analyze: "ANALYZE",
    exp.Cache: "CACHE", exp.Uncache: "UNCACHE", exp.Kill: "KILL", exp.Refresh: "REFRESH",
}
# Word pairs refused before parsing: sqlglot does not read every one of them.
REFUSED_PHRASES = {("INTO", "OUTFILE"): "INTO OUTFILE", ("INTO", "DUMPFILE"): "INTO DUMPFILE",
                   ("LOAD", "DATA"): "LOAD DATA", ("LOAD", "XML"): "LOAD XML"}
REFUSED_FIRST_WORDS = {"COPY": "COPY", "CALL": "CALL", "DO": "DO", "HANDLER": "HANDLER", "EXECUTE": "EXECUTE",
                       "PREPARE": "PREPARE", "LISTEN": "LISTEN", "NOTIFY": "NOTIFY", "VACUUM": "VACUUM"}


class Refused(Exception):
    """The gate refused a statement; str() says what was refused."""


def check_statement(sql, engine):
    """The sqlglot tree of `sql` when it is one read-only SELECT in the dialect of `engine` ("postgresql" or
    "mysql"); raises Refused naming what was refused otherwise."""
    dialect = SQLGLOT_DIALECTS[engine]
    if not isinstance(sql, str) or not sql.strip():
        raise Refused("empty statement")
    if "\0" in sql:
        raise Refused("a NUL character in the statement")
    try:
        tokens = sqlglot.tokenize(sql, read=dialect)
    except sqlglot.errors.TokenError as error:
        raise Refused(f"cannot read the statement as {engine} SQL: {_first_line(error)}") from None
    _check_tokens(tokens)
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError as error:
        raise Refused(f"cannot parse the statement as {engine} SQL: {_first_line(error)}") from None
    _check_tree(tree)
    return tree


def _check_tokens(tokens):
    statements = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            statements.append([])
        else:
            statements[-1].append(token)
    statements = [s for s in statements if s]
    if len(statements) > 1:
        first_words = ", ".join(s[0].text.upper() for s in statements)
        raise Refused(f"stacked statements ({len(statements)}: {first_words}); send one SELECT per call")
    if not statements:
        raise Refused("empty statement")
    words = [t.text.upper() for t in statements[0] if t.token_type != TokenType.STRING]
    if words[0] in REFUSED_FIRST_WORDS:
        raise Refused(f"{REFUSED_FIRST_WORDS[words[0]]} is not a SELECT")
    for pair in zip(words, words[1:]):
        if pair in REFUSED_PHRASES:
            raise Refused(f"{REFUSED_PHRASES[pair]} writes or reads files on the server")


def _check_tree(tree):
    if isinstance(tree, exp.Subquery):
        tree = tree.unnest()
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        raise Refused(f"not a SELECT statement ({_kind(tree)})")
    for node in tree.walk():
        for kind, name in REFUSED_NODES.items():
            if isinstance(node, kind):
                where = " inside a CTE" if node.find_ancestor(exp.CTE) else ""
                raise Refused(f"{name}{where}: only a SELECT that writes nothing may run")
        if isinstance(node, exp.Func):
            name = function_name(node)
            if name in BLOCKED_FUNCTIONS or name.startswith(BLOCKED_PREFIXES):
                raise Refused(f"function {name}(): it has effects outside the query")


def function_name(node):
    """The lowercase name of a function call as written (sqlglot's name for the functions it knows)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _kind(tree):
    return type(tree).__name__.upper() if tree is not None else "nothing"


def _first_line(error):
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
