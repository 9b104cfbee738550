"""GBNF grammars of the SQLite SELECT dialect relmem executes, with table and column names limited to a schema.

    rules = sql_rules({"singer": ["Singer_ID", "Name", "Age"]}, prefix="s")   # rule "s-query" and its helpers
    grammar = sql_grammar({"singer": [...]})                                  # root ::= one query

Decoding under such a grammar (llama.cpp) cannot name a table or column the prompt did not show, nor write anything
but one read-only query: SELECT with DISTINCT, joins, subqueries, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT/OFFSET,
UNION/INTERSECT/EXCEPT, CASE, CAST, and SQLite's common functions. Keywords and function names are upper or lower
case. Table aliases are T1-T9 (t1-t9) or one lower-case letter, so a word such as "of" cannot pass for one; output
aliases (AS name) are free, and ORDER BY may name one. Names are the schema's in any letter case (SQLite compares
them so), bare when they are plain identifiers, else (and optionally) in double quotes.

The server engines get their own variant (sql_rules(..., dialect="postgresql" or "mysql")): their operators,
functions and CAST types; names quoted as they quote them (double quotes, backticks) and then spelled exactly as the
schema does, since a quoted name is looked up by case there (a bare one is matched to its case by the executor).
"""
import dataclasses
import re

FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "TOTAL", "GROUP_CONCAT", "ABS", "ROUND", "LENGTH", "LOWER", "UPPER",
             "SUBSTR", "SUBSTRING", "TRIM", "LTRIM", "RTRIM", "REPLACE", "INSTR", "COALESCE", "IFNULL", "NULLIF",
             "STRFTIME", "DATE", "TIME", "DATETIME", "JULIANDAY", "CAST")


@dataclasses.dataclass(frozen=True)
class Dialect:
    """What the grammar of one engine's SELECT differs in."""
    functions: tuple
    operators: str   # GBNF alternatives of the binary operators
    matches: str     # of the pattern tests
    types: str       # of the CAST types
    quote: str       # the character that quotes a name
    exact_quoted: bool  # whether a quoted name must have the schema's letter case


DIALECTS = {
    "sqlite": Dialect(FUNCTIONS,
                      '"=" | "==" | "!=" | "<>" | "<=" | ">=" | "<" | ">" | "+" | "-" | "*" | "/" | "%" | "||"',
                      '"LIKE" | "GLOB"', '"INTEGER" | "INT" | "REAL" | "FLOAT" | "TEXT" | "NUMERIC"', '"', False),
    "postgresql": Dialect(
        ("COUNT", "SUM", "AVG", "MIN", "MAX", "STRING_AGG", "ABS", "ROUND", "LENGTH", "LOWER", "UPPER", "SUBSTR",
         "SUBSTRING", "TRIM", "LTRIM", "RTRIM", "REPLACE", "STRPOS", "CONCAT", "COALESCE", "NULLIF", "DATE_PART",
         "TO_CHAR", "CAST"),
        '"=" | "!=" | "<>" | "<=" | ">=" | "<" | ">" | "+" | "-" | "*" | "/" | "%" | "||"', '"LIKE" | "ILIKE"',
        '"INTEGER" | "INT" | "REAL" | "FLOAT" | "TEXT" | "NUMERIC"', '"', True),
    "mysql": Dialect(
        ("COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "ABS", "ROUND", "LENGTH", "CHAR_LENGTH", "LOWER", "UPPER",
         "SUBSTR", "SUBSTRING", "TRIM", "LTRIM", "RTRIM", "REPLACE", "INSTR", "CONCAT", "COALESCE", "IFNULL", "NULLIF",
         "YEAR", "MONTH", "DAY", "DATE", "DATE_FORMAT", "DATEDIFF", "CAST"),
        '"=" | "!=" | "<>" | "<=" | ">=" | "<" | ">" | "+" | "-" | "*" | "/" | "%"', '"LIKE"',
        '"SIGNED" | "UNSIGNED" | "DECIMAL" | "CHAR" | "DOUBLE" | "FLOAT"', "`", True),
}
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
P-op ::= P-ows (@OPERATORS@) P-ows | P-ws ("AND" | "OR") P-ws
P-unary ::= ("NOT" P-ws | "-")? P-term P-test?
P-test ::= P-ws "IS" P-ws ("NOT" P-ws)? "NULL" | P-ws ("NOT" P-ws)? "IN" P-ows "(" P-ows (P-query | P-exprs) P-ows ")" | P-ws ("NOT" P-ws)? (@MATCHES@) P-ws P-term | P-ws ("NOT" P-ws)? "BETWEEN" P-ws P-term P-ws "AND" P-ws P-term
P-term ::= P-literal | P-column-ref | P-call | "(" P-ows (P-query | P-expr) P-ows ")" | "EXISTS" P-ows "(" P-ows P-query P-ows ")" | P-case
P-call ::= P-function "(" P-ows ("*" | ("DISTINCT" P-ws)? P-exprs)? P-ows ")" | "CAST(" P-ows P-expr P-ws "AS" P-ws P-type P-ows ")"
P-case ::= "CASE" (P-ws P-expr)? (P-ws "WHEN" P-ws P-expr P-ws "THEN" P-ws P-expr){1,5} (P-ws "ELSE" P-ws P-expr)? P-ws "END"
P-type ::= @TYPES@
P-column-ref ::= (P-qual ".")? P-column
P-qual ::= P-table | P-alias
P-alias ::= [Tt] [1-9] | [a-z]
P-label ::= [A-Za-z_] [A-Za-z0-9_]{0,30} | @LABEL@
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


def name_alternatives(name, dialect="sqlite"):
    """The GBNF alternatives that write `name`: quoted as the dialect quotes names (in any case on SQLite, as
    spelled on the servers), and bare in any case when it is a plain non-keyword name."""
    of = DIALECTS[dialect]
    inside = name.replace(of.quote, of.quote * 2)
    mark = _quoted(of.quote)
    quoted = f"{mark} {_quoted(inside) if of.exact_quoted else _any_case(inside)} {mark}"
    if _PLAIN.fullmatch(name) and name.lower() not in KEYWORDS:
        return [f"({_any_case(name)})", quoted]
    return [quoted]


def _choice(names, dialect):
    alternatives = []
    # names that differ only in case are one name where names are compared in any case
    unique = set(names) if DIALECTS[dialect].exact_quoted else {name.lower(): name for name in names}.values()
    for name in sorted(unique, key=lambda n: (-len(n), n)):  # longest first: a name before its prefixes
        alternatives += name_alternatives(name, dialect)
    return " | ".join(alternatives)


def sql_rules(tables, prefix="sql", dialect="sqlite"):
    """The rules of one query over `tables` ({table: [column, ...]}) in `dialect` ("sqlite", "postgresql" or
    "mysql"), named `<prefix>-...`; `<prefix>-query` is the query. Raises ValueError for an empty schema or a prefix
    that is not a GBNF rule name."""
    if not re.fullmatch(r"[a-z][a-z0-9]*", prefix):
        raise ValueError(f"grammar prefix must be lower-case letters and digits, not {prefix!r}")
    tables = {table: list(columns) for table, columns in tables.items() if table}
    if not tables:
        raise ValueError("a SQL grammar needs at least one table")
    of = DIALECTS[dialect]
    columns = [c for cs in tables.values() for c in cs] or ["rowid"]
    mark = _quoted(of.quote)
    rules = (_DIALECT.replace("@OPERATORS@", of.operators).replace("@MATCHES@", of.matches)
             .replace("@TYPES@", of.types).replace("@LABEL@", f'{mark} [^{_class(of.quote)}\\n]{{1,40}} {mark}')
             .replace("P-", f"{prefix}-").strip())
    rules += f"\n{prefix}-table ::= {_choice(tables, dialect)}"
    rules += f"\n{prefix}-column ::= {_choice(columns, dialect)}"
    rules += f"\n{prefix}-function ::= {' | '.join(_quoted(f) for f in of.functions if f != 'CAST')}"
    return _KEYWORD.sub(lambda m: f'("{m.group(1)}" | "{m.group(1).lower()}")', rules) + "\n"


def _class(character):
    """`character` inside a GBNF character class."""
    return "\\" + character if character in "\\]^-" else character


def sql_grammar(tables, end=""):
    """A whole grammar: one query over `tables`, then the literal text `end` (e.g. "\\nEnd SQL")."""
    tail = f" {_quoted(end)}" if end else ""
    return f"root ::= sql-query (\";\")?{tail}\n" + sql_rules(tables, "sql")
