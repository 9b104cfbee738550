"""Translates BlendSQL hybrid queries (SWAN's baseline) into relmem's SQL functions.

    {{LLMMap('question', 'T::column', options='a;b')}}   ->  llm_map_in('question', 'a;b',
                                                                         json_object('column', "T"."column"))
    {{LLMMap('question', 'T::column')}}                  ->  llm_map('question', json_object('column', "T"."column"))
    {{LLMQA('question', (SELECT ...), options=(t::c)}}   ->  (SELECT llm_qa_in('question', 't.c',
                                                              json_object('c1', "c1", ...)) FROM (SELECT ...))
    {{LLMJoin(left_on='a::x', right_on='b::y')}}         ->  "b" ON "b"."y" = llm_match('same entity', "a"."x", 'b.y')

Each input names the columns its values come from (json_object), as BlendSQL tells its LLM the column it maps.

SWAN's files need a little tolerance, applied here: an instruction and a column written as adjacent literals without
a comma, column references with trailing spaces, options given as a string or in parentheses, a subquery given as a
string, a second WITH keyword inside one WITH clause, a comma before FROM, a query that is only an LLMQA call, a table
named by itself where its FROM clause gives it an alias (`temp::key` in `FROM temp AS T1` is written T1.key), and a
yes/no answer compared with DuckDB's 't' or 'f'. LLMQA's subquery columns are read from the database (the subquery
is compiled, not run), since the aggregate needs them by name.
"""
import re
import sqlite3

from .._relmem import Error
from .sql_scope import Scopes

_BLOCK = re.compile(r"\{\{(.*?)\}\}", re.S)
_SECOND_WITH = re.compile(r"\)\s*,\s*WITH\s+", re.I)
_COMMA_BEFORE_FROM = re.compile(r",(\s*FROM\s)", re.I)


def _arguments(text):
    """Splits a BlendSQL call's argument list: string literals (adjacent ones stay separate), parenthesized parts,
    keyword arguments and bare words. Returns (positional, keywords)."""
    positional, keywords = [], {}
    i, n = 0, len(text)
    pending_key = None
    while i < n:
        c = text[i]
        if c.isspace() or c == ",":
            i += 1
            continue
        match = re.match(r"(\w+)\s*=", text[i:])
        if match and not text[i:].startswith(("'", '"')):
            pending_key = match.group(1)
            i += match.end()
            continue
        if c in "'\"":
            j = i + 1
            while j < n and not (text[j] == c and (j + 1 >= n or text[j + 1] != c)):
                j += 2 if text[j] == c else 1
            value = ("str", text[i + 1:j].replace(c * 2, c))
            i = j + 1
        elif c == "(":
            depth, j = 0, i
            while j < n:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            value = ("paren", text[i + 1:j].strip())
            i = j + 1
        else:
            j = i
            while j < n and text[j] not in ", \n\t":
                j += 1
            value = ("word", text[i:j])
            i = j
        if pending_key:
            keywords[pending_key] = value
            pending_key = None
        else:
            positional.append(value)
    return positional, keywords


def _column(reference, name_of=lambda table: table):
    """'T::column' -> "T"."column", T written as `name_of` says it is known where the call sits (a FROM clause may
    rename it); None when it is not a column reference."""
    named = _column_name(reference)
    return f'"{name_of(named[0])}"."{named[1]}"' if named else None


def _column_name(reference):
    """'T::column' -> (T, column); None when it is not a column reference."""
    if "::" not in reference:
        return None
    table, column = (part.strip().strip("`\"") for part in reference.strip().split("::", 1))
    return (table, column) if table and column else None


def _named(pairs):
    """The input of an LLM function as an object naming its columns, as BlendSQL tells its LLM which column a value
    comes from: json_object('column', value, ...)."""
    return "json_object(" + ", ".join(f"{_literal(name)}, {value}" for name, value in pairs) + ")"


def _literal(text):
    return "'" + text.replace("'", "''") + "'"


def _domain(value):
    """options='a;b' -> 'a;b'; options='t::c' or (t::c) -> 't.c'."""
    kind, text = value
    text = text.strip()
    if "::" in text:
        table, column = (part.strip().strip("`\"'") for part in text.split("::", 1))
        return _literal(f"{table}.{column}")
    return _literal(text)


def _subquery_columns(connection, subquery):
    try:
        cursor = connection.execute(f"SELECT * FROM ({subquery}) LIMIT 0")
    except sqlite3.Error as error:
        raise Error(f"BlendSQL subquery does not compile: {error}: {subquery}") from None
    return [d[0] for d in cursor.description]


def _translate_call(call, connection, name_of):
    match = re.match(r"\s*(LLMMap|LLMQA|LLMJoin)\s*\((.*)\)\s*$", call, re.S)
    if not match:
        raise Error(f"not a BlendSQL ingredient call: {call.strip()[:80]}")
    name, body = match.groups()
    positional, keywords = _arguments(body)
    options = keywords.get("options")
    if name == "LLMJoin":
        left, right = _column(keywords["left_on"][1], name_of), keywords["right_on"][1]
        table, column = (p.strip() for p in right.split("::", 1))
        return (f'"{table}" ON "{table}"."{column}" = llm_match({_literal("the same entity")}, {left}, '
                f"{_literal(table + '.' + column)})")
    instruction = positional[0][1] if positional and positional[0][0] == "str" else None
    if instruction is None:
        raise Error(f"{name} needs an instruction: {call.strip()[:80]}")
    rest = positional[1:] or ([keywords["context"]] if "context" in keywords else [])
    if not rest:
        raise Error(f"{name} needs a column or a subquery: {call.strip()[:80]}")
    kind, source = rest[0]
    function = ("llm_map" if name == "LLMMap" else "llm_qa") + ("_in" if options else "")
    head = f"{function}({_literal(instruction)}" + (f", {_domain(options)}" if options else "")
    column = _column(source, name_of)
    if name == "LLMMap" and column is None:
        raise Error(f"LLMMap needs a 'table::column' reference: {call.strip()[:80]}")
    if column is not None:  # LLMMap, or LLMQA over a column of the current query
        return f"{head}, {_named([(_column_name(source)[1], column)])})"
    subquery = source.strip().rstrip(";")
    columns = _named((c, '"' + c.replace('"', '""') + '"') for c in _subquery_columns(connection, subquery))
    return f"(SELECT {head}, {columns}) FROM ({subquery}))"


_ALIAS_AFTER = re.compile(r"\s+AS\s+(\w+)", re.I)
_BOOLEAN_TEXT = {"t": "TRUE", "f": "FALSE", "true": "TRUE", "false": "FALSE"}


def _booleans_compared_as_text(sql, names):
    """A yes/no answer compared with 't' or 'f' (boolean literals of DuckDB and Postgres, where some SWAN queries
    were written) is compared with TRUE or FALSE: SQLite's functions answer 1 or 0. `names`: the columns that hold
    function answers (their AS names)."""
    for name in names:
        pattern = re.compile(rf"((?<![\w.])(?:\w+\.)?{re.escape(name)}\s*(?:=|!=|<>)\s*)'(t|f|true|false)'", re.I)
        sql = pattern.sub(lambda m: m.group(1) + _BOOLEAN_TEXT[m.group(2).lower()], sql)
    return sql


def translate(sql, connection, write_call=None):
    """The BlendSQL query `sql` in relmem's SQL functions; `connection` (sqlite3, read-only) compiles LLMQA's
    subqueries to name their columns. `write_call(call, connection, name_of)` writes each call instead (the SWAN
    bench's BlendSQL runner writes them in current BlendSQL's syntax); SWAN's SQL tolerances apply either way.
    Raises relmem.Error on calls it cannot read."""
    write_call = write_call or _translate_call
    scopes = Scopes(_BLOCK.sub(lambda m: "x" * len(m.group(0)), sql))  # calls masked: their parentheses and quotes
    translated = _BLOCK.sub(lambda m: write_call(m.group(1), connection,
                                                 lambda table: scopes.name_at(m.start(), table)), sql)
    answers = {m.group(1) for block in _BLOCK.finditer(sql) if (m := _ALIAS_AFTER.match(sql, block.end()))}
    translated = _booleans_compared_as_text(translated, answers).strip().rstrip(";")
    if translated.startswith("("):  # a query that is only an LLMQA call
        translated = "SELECT " + translated
    return _COMMA_BEFORE_FROM.sub(r"\1", _SECOND_WITH.sub("), ", translated))
