"""GBNF grammars of the SQLite SELECT dialect relmem executes, with table and column names limited to a schema.

    rules = sql_rules({"singer": ["Singer_ID", "Name", "Age"]}, prefix="s")   # rule "s-query" and its helpers
    grammar = sql_grammar({"singer": [...]})                                  # root ::= one query

Decoding under such a grammar (llama.cpp) cannot name a table or column the prompt did not show, nor write anything
but one read-only query: SELECT with DISTINCT, joins, subqueries, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT/OFFSET,
UNION/INTERSECT/EXCEPT, CASE, CAST, and SQLite's common functions. Keywords and function names are upper or lower
case. Table aliases are T1-T9 (t1-t9) or one lower-case letter, so a word such as "of" cannot pass for one; output
aliases (AS name) are free, and ORDER BY may name one. Names are the schema's in any letter case (SQLite compares
them so), bare when they are plain identifiers, else (and optionally) in double quotes.
"""
import re

FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "TOTAL", "GROUP_CONCAT", "ABS", "ROUND", "LENGTH", "LOWER", "UPPER",
             "SUBSTR", "SUBSTRING", "TRIM", "LTRIM", "RTRIM", "REPLACE", "INSTR", "COALESCE", "IFNULL", "NULLIF",
             "STRFTIME", "DATE", "TIME", "DATETIME", "JULIANDAY", "CAST")
KEYWORDS = {"select", "from", "where", "group", "by", "having", "order", "limit", "offset", "join", "on", "as", "and",
            "or", "not", "in", "like", "between", "is", "null", "union", "intersect", "except", "all", "distinct",
            "case", "when", "then", "else", "end", "asc", "desc", "left", "inner", "outer", "cross", "exists", "glob",
            "natural", "using", "with", "cast", "escape", "values", "table", "index", "key", "primary", "default"}
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORD = re.compile(r'"([A-Z][A-Z_ (]+)"')  # a keyword literal of the dialect: upper or lower case

# The dialect, written once for a prefix P: every rule is P-<name>; P-table and P-column come from the schema.
_DIALECT = r'''
P-query ::= P-select (P-ws P-setop P-ws P-select){0,3}
P-setop ::= "UNION ALL" | "UNION" | "INTERSECT" | "EXCEPT"
P-select ::= "SELECT" P-ws ("DISTINCT" P-ws)? P-items (P-ws "FROM" P-ws P-from)? (P-ws "WHERE" P-ws P-expr)? (P-ws "GROUP BY" P-ws P-exprs)? (P-ws "HAVING" P-ws P-expr)? (P-ws "ORDER BY" P-ws P-order (P-comma P-order){0,5})? (P-ws "LIMIT" P-ws P-int (P-ws "OFFSET" P-ws P-int)?)?
P-items ::= P-item (P-comma P-item){0,15}
P-item ::= "*" | P-qual ".*" | P-expr (P-ws "AS" P-ws P-label)?
P-from ::= P-source (P-join P-source (P-ws "ON" P-ws P-expr)?){0,7}
P-join ::= P-comma | P-ws ("LEFT " ("OUTER ")? | "INNER " | "CROSS ")? "JOIN" P-ws
P-source ::= (P-table | "(" P-ows P-query P-ows ")") (P-ws ("AS" P-ws)? P-alias)?
P-exprs ::= P-expr (P-comma P-expr){0,7}
P-order ::= (P-expr | P-label) (P-ws ("ASC" | "DESC"))?
P-expr ::= P-unary (P-op P-unary){0,11}
P-op ::= P-ows ("=" | "==" | "!=" | "<>" | "<=" | ">=" | "<" | ">" | "+" | "-" | "*" | "/" | "%" | "||") P-ows | P-ws ("AND" | "OR") P-ws
P-unary ::= ("NOT" P-ws | "-")? P-term P-test?
P-test ::= P-ws "IS" P-ws ("NOT" P-ws)? "NULL" | P-ws ("NOT" P-ws)? "IN" P-ows "(" P-ows (P-query | P-exprs) P-ows ")" | P-ws ("NOT" P-ws)? ("LIKE" | "GLOB") P-ws P-term | P-ws ("NOT" P-ws)? "BETWEEN" P-ws P-term P-ws "AND" P-ws P-term
P-term ::= P-literal | P-column-ref | P-call | "(" P-ows (P-query | P-expr) P-ows ")" | "EXISTS" P-ows "(" P-ows P-query P-ows ")" | P-case
P-call ::= P-function "(" P-ows ("*" | ("DISTINCT" P-ws)? P-exprs)? P-ows ")" | "CAST(" P-ows P-expr P-ws "AS" P-ws P-type P-ows ")"
P-case ::= "CASE" (P-ws P-expr)? (P-ws "WHEN" P-ws P-expr P-ws "THEN" P-ws P-expr){1,5} (P-ws "ELSE" P-ws P-expr)? P-ws "END"
P-type ::= "INTEGER" | "INT" | "REAL" | "FLOAT" | "TEXT" | "NUMERIC"
P-column-ref ::= (P-qual ".")? P-column
P-qual ::= P-table | P-alias
P-alias ::= [Tt] [1-9] | [a-z]
P-label ::= [A-Za-z_] [A-Za-z0-9_]{0,30} | "\"" [^"\n]{1,40} "\""
P-literal ::= P-number | "'" ([^'\n] | "''"){0,200} "'" | "NULL"
P-number ::= P-int ("." [0-9]{1,10})?
P-int ::= [0-9]{1,12}
P-comma ::= P-ows "," P-ows
P-ws ::= [ \n] " "{0,7}
P-ows ::= P-ws?
'''


def _quoted(name):
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _any_case(text):
    """GBNF for `text` in any letter case, as SQLite compares names: "Name" -> [Nn] [Aa] [Mm] [Ee]."""
    parts, plain = [], ""
    for c in text:
        if c.lower() != c.upper() and len(c.lower()) == len(c.upper()) == 1:
            if plain:
                parts.append(_quoted(plain))
                plain = ""
            parts.append(f"[{c.upper()}{c.lower()}]")
        else:
            plain += c
    if plain:
        parts.append(_quoted(plain))
    return " ".join(parts)


def name_alternatives(name):
    """The GBNF alternatives that write `name` in any case: in double quotes, and bare when it is a plain
    non-keyword name."""
    quoted = f'"\\"" {_any_case(name.replace(chr(34), chr(34) * 2))} "\\""'
    if _PLAIN.fullmatch(name) and name.lower() not in KEYWORDS:
        return [f"({_any_case(name)})", quoted]
    return [quoted]


def _choice(names):
    alternatives = []
    unique = {name.lower(): name for name in names}.values()  # names that differ only in case are one name
    for name in sorted(unique, key=lambda n: (-len(n), n)):  # longest first: a name before its prefixes
        alternatives += name_alternatives(name)
    return " | ".join(alternatives)


def sql_rules(tables, prefix="sql"):
    """The rules of one query over `tables` ({table: [column, ...]}), named `<prefix>-...`; `<prefix>-query` is the
    query. Raises ValueError for an empty schema or a prefix that is not a GBNF rule name."""
    if not re.fullmatch(r"[a-z][a-z0-9]*", prefix):
        raise ValueError(f"grammar prefix must be lower-case letters and digits, not {prefix!r}")
    tables = {table: list(columns) for table, columns in tables.items() if table}
    if not tables:
        raise ValueError("a SQL grammar needs at least one table")
    columns = [c for cs in tables.values() for c in cs] or ["rowid"]
    rules = _DIALECT.replace("P-", f"{prefix}-").strip()
    rules += f"\n{prefix}-table ::= {_choice(tables)}"
    rules += f"\n{prefix}-column ::= {_choice(columns)}"
    rules += f"\n{prefix}-function ::= {' | '.join(_quoted(f) for f in FUNCTIONS if f != 'CAST')}"
    return _KEYWORD.sub(lambda m: f'("{m.group(1)}" | "{m.group(1).lower()}")', rules) + "\n"


def sql_grammar(tables, end=""):
    """A whole grammar: one query over `tables`, then the literal text `end` (e.g. "\\nEnd SQL")."""
    tail = f" {_quoted(end)}" if end else ""
    return f"root ::= sql-query (\";\")?{tail}\n" + sql_rules(tables, "sql")
