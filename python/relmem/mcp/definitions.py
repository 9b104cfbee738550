"""The tools relmem offers, with the JSON Schemas of their arguments and results. One list serves MCP (tools/list)
and function calling (`relmem tools --format openai|anthropic`)."""
from .tools import ANY, BOOLEAN, INTEGER, NUMBER, STRING, Tool, array, integer, obj, string

_MATCH = obj({"database": STRING, "score": NUMBER, "probability": NUMBER}, ["database", "score", "probability"],
             closed=False)
_VALUE = obj({"value": STRING, "score": NUMBER, "table": STRING, "column": STRING,
              "evidence": {"type": "object", "additionalProperties": NUMBER}},
             ["value", "score", "table", "column"], closed=False)
_LINK = obj({**_VALUE["properties"], "span": STRING, "start": INTEGER, "end": INTEGER},
            _VALUE["required"] + ["span", "start", "end"], closed=False)
_DATABASE = string("database name, as list_databases gives it", minLength=1, maxLength=200)
_QUESTION = string("the user's question", minLength=1, maxLength=4000)


def define_tools(handlers=None, timeout=5.0, max_rows=1000):
    """The tools, answered by the methods of `handlers` named like them (None: definitions only). `timeout` and
    `max_rows` are run_sql's limits, stated in its description and schema."""
    def handler(name):
        return getattr(handlers, name) if handlers is not None else None

    rows_limit = integer(f"rows returned at most (server limit {max_rows})", 1, max_rows, min(100, max_rows))
    return [
        Tool("list_databases", "List databases",
             "Every database of the served folder: name, a one-line card, tables with row counts.",
             obj({}),
             obj({"count": INTEGER, "databases": array(obj(
                 {"name": STRING, "card": STRING, "rows": INTEGER,
                  "tables": array(obj({"name": STRING, "rows": INTEGER}, ["name", "rows"], closed=False))},
                 ["name", "card", "tables", "rows"], closed=False))}, ["count", "databases"], closed=False),
             handler("list_databases")),
        Tool("describe_database", "Describe a database",
             "One database's CREATE TABLE statements, foreign keys and sample values of every column.",
             obj({"database": _DATABASE, "samples": integer("sample values per column", 0, 10, 3)},
                 ["database"]),
             obj({"database": STRING, "description": STRING, "ddl": STRING, "tables": array(obj(
                 {"name": STRING, "rows": INTEGER,
                  "columns": array(obj({"name": STRING, "type": STRING, "primary_key": BOOLEAN,
                                        "not_null": BOOLEAN, "samples": array(ANY)},
                                       ["name", "type", "samples"], closed=False)),
                  "foreign_keys": array(obj({"column": STRING, "references_table": STRING,
                                             "references_column": STRING}, closed=False))},
                 ["name", "rows", "columns", "foreign_keys"], closed=False))},
                 ["database", "ddl", "tables"], closed=False),
             handler("describe_database")),
        Tool("select_databases", "Select databases for a question",
             "Ranks the databases by how likely they answer the question, with calibrated probabilities. "
             "A composite question ('Q1: ...; Q2: ...', or several sentences) is ranked by its parts; give "
             "'parts' to rank by your own split of the question into independent questions instead. "
             "'selected' is the set of databases above the calibrated threshold (at least each part's best).",
             obj({"question": _QUESTION,
                  "k": integer("databases to rank", 1, 50, 5),
                  "parts": dict(array(string("one independent question", minLength=1, maxLength=4000),
                                      "the question split into the independent questions it asks (optional)"),
                                minItems=1, maxItems=20)}, ["question"]),
             obj({"question": STRING, "parts": array(STRING), "ranking": array(_MATCH),
                  "selected": array(STRING),
                  "part_rankings": array(obj({"part": STRING, "ranking": array(_MATCH)}, closed=False))},
                 ["question", "parts", "ranking", "selected"], closed=False),
             handler("select_databases")),
        Tool("find_values", "Find stored values",
             "The values a database stores for what a person wrote (e.g. 'Los Angeles' -> 'LA'), best first, "
             "in one column (table and column), one table, or the whole database.",
             obj({"database": _DATABASE, "text": string("the value as a person wrote it", minLength=1,
                                                        maxLength=500),
                  "table": string("restrict to this table", minLength=1, maxLength=200),
                  "column": string("restrict to this column of the table", minLength=1, maxLength=200),
                  "k": integer("values to return", 1, 100, 10)}, ["database", "text"]),
             obj({"database": STRING, "text": STRING, "matches": array(_VALUE)},
                 ["database", "text", "matches"], closed=False),
             handler("find_values")),
        Tool("link_values", "Link question words to stored values",
             "The spans of a question that match values stored anywhere in the database, with where they are "
             "stored.",
             obj({"database": _DATABASE, "question": _QUESTION,
                  "k": integer("links to return", 1, 100, 10),
                  "min_score": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.85,
                                "description": "least match score"}}, ["database", "question"]),
             obj({"database": STRING, "question": STRING, "links": array(_LINK)},
                 ["database", "question", "links"], closed=False),
             handler("link_values")),
        Tool("check_sql", "Check SQL",
             "Static diagnostics of a SQLite query against the database's schema (unknown names, joins, "
             "aggregates, types) and checks that its string literals are stored values.",
             obj({"database": _DATABASE, "sql": string("one SQLite query", minLength=1, maxLength=100000)},
                 ["database", "sql"]),
             obj({"database": STRING, "ok": BOOLEAN,
                  "diagnostics": array(obj({"severity": STRING, "kind": STRING, "message": STRING,
                                            "start": INTEGER, "end": INTEGER}, closed=False)),
                  "value_checks": array(obj({"table": STRING, "column": STRING, "op": STRING, "value": STRING,
                                             "status": STRING, "similar": array(_VALUE)}, closed=False)),
                  "value_feedback": STRING}, ["database", "ok", "diagnostics", "value_checks"], closed=False),
             handler("check_sql")),
        Tool("run_sql", "Run read-only SQL",
             f"Runs one SELECT or WITH statement read-only (writes, ATTACH, PRAGMA and extensions are refused) "
             f"with a {timeout:g} s time limit; refusals and errors come back as tool errors with the "
             f"reason.",
             obj({"database": _DATABASE, "sql": string("one SQLite SELECT/WITH statement", minLength=1,
                                                       maxLength=100000),
                  "max_rows": rows_limit}, ["database", "sql"]),
             obj({"database": STRING, "columns": array(STRING), "rows": array(array(ANY)),
                  "row_count": INTEGER, "truncated": BOOLEAN, "truncated_reason": STRING, "elapsed_ms": NUMBER},
                 ["database", "columns", "rows", "row_count", "truncated"], closed=False),
             handler("run_sql")),
        Tool("ask", "Answer a question from the databases",
             "The whole relmem pipeline: selects databases, links values, writes, checks and runs SQL, and "
             "answers. Uses the server's LLM, else the client's LLM through MCP sampling; without either, only "
             "the LLM-free stages run and the result says so.",
             obj({"question": _QUESTION}, ["question"]),
             obj({"question": STRING, "answer": STRING, "llm": {"type": "string",
                                                                 "enum": ["configured", "sampling", "none"]},
                  "results": array(ANY), "trace": array(ANY), "note": STRING},
                 ["question", "answer", "llm", "results"], closed=False),
             handler("ask"), open_world=True),
    ]
