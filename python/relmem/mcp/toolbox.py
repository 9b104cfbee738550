"""relmem's tools over one served folder of SQLite databases: the same tools for MCP and for function calling.

    toolbox = Toolbox.open("path/to/dbs", memory="path/to/memdir")
    toolbox.call("find_values", {"database": "restaurants", "text": "Los Angeles"})

No tool takes a path: databases are named, and every name is checked against the catalog of the served folder.
SQL runs through the read-only executor with the toolbox's time, row and byte limits, in worker processes that are
killed when a statement outlives its time limit (see sandbox.py).
"""
import json
from urllib.parse import quote, unquote

from .. import Catalog, Error, _relmem
from ..agent.memories import Memories
from ..agent.pipeline import Pipeline
from ..sql import inspect
from . import views
from .definitions import define_tools
from .sampling import sampling_llm
from .sandbox import SqlSandbox
from .tools import ToolError

SCHEMA_URI = "relmem://{database}/schema"


class Toolbox:
    def __init__(self, catalog, memories, llm=None, timeout=5.0, max_rows=1000, max_result_bytes=1 << 20,
                 max_cell_chars=2000, sampling_timeout=120.0):
        """`memories`: relmem.agent.memories.Memories of the catalog's databases. `llm`: a relmem LLM for ask, or
        None (ask then uses the MCP client's LLM through sampling when it can). Limits of run_sql: `timeout`
        seconds, `max_rows` rows and `max_result_bytes` bytes of JSON per result, `max_cell_chars` per value."""
        self.catalog = catalog
        self.memories = memories
        self.llm = llm
        self.timeout = timeout
        self.max_rows = max_rows
        self.max_result_bytes = max_result_bytes
        self.max_cell_chars = max_cell_chars
        self.sampling_timeout = sampling_timeout
        self.sandbox = SqlSandbox()
        self.tools = define_tools(self, timeout, max_rows)
        self._by_name = {tool.name: tool for tool in self.tools}

    @classmethod
    def open(cls, dbs, memory=None, encoder=None, llm=None, progress=False, **limits):
        """The toolbox of folder `dbs`; memories loaded from `memory` (saved by `relmem index`) or built now."""
        catalog = Catalog(dbs)
        if not len(catalog):
            raise Error(f"no SQLite databases found in {dbs}")
        if memory:
            memories = Memories.load(memory)
            memories.check_catalog(catalog)
        else:
            memories = Memories.build(catalog, encoder=encoder, progress=progress)
        return cls(catalog, memories, llm=llm, **limits)

    def close(self):
        """Stops run_sql's worker processes."""
        self.sandbox.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- calling ---------------------------------------------------------------------------------------------
    def call(self, name, arguments=None, call=None):
        """The structured result of tool `name`; raises ToolError for unknown tools, bad arguments and refusals."""
        tool = self._by_name.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r} (tools: {', '.join(self._by_name)})")
        return tool.run(arguments, call)

    def _database(self, arguments):
        name = arguments["database"]
        if name not in self.catalog:
            known = self.catalog.databases
            raise ToolError(f"unknown database {name!r}: the served folder has {len(known)} databases "
                            f"({', '.join(known[:8])}{', ...' if len(known) > 8 else ''}); see list_databases")
        return name

    def _values(self, db):
        values = self.memories.values
        if values is None or db not in values:
            raise ToolError(f"the value memory does not cover {db!r}: rebuild it with `relmem index`")
        return values

    # --- tools -----------------------------------------------------------------------------------------------
    def list_databases(self, arguments, call):
        databases = []
        for db in self.catalog.databases:
            tables = self.catalog.schema(db).tables
            description = self.memories.descriptions.get(db, "")
            summary = ", ".join(f"{t.name} ({t.row_count} rows)" for t in tables)
            databases.append({"name": db, "card": f"{description + ' ' if description else ''}"
                                                  f"{len(tables)} tables: {summary}",
                              "tables": [{"name": t.name, "rows": t.row_count} for t in tables],
                              "rows": sum(t.row_count for t in tables)})
        return {"count": len(databases), "databases": databases}

    def describe_database(self, arguments, call):
        db = self._database(arguments)
        samples = arguments.get("samples", 3)
        tables = []
        for table in self.catalog.schema(db).tables:
            columns = [{"name": c.name, "type": c.type, "primary_key": bool(c.primary_key), "not_null": c.not_null,
                        "samples": [views.cell(v, 100) for v in
                                    (self.catalog.distinct_values(db, table.name, c.name, samples) if samples else [])]}
                       for c in table.columns]
            keys = [{"column": f.from_column, "references_table": f.to_table, "references_column": f.to_column}
                    for f in table.foreign_keys]
            tables.append({"name": table.name, "rows": table.row_count, "columns": columns, "foreign_keys": keys})
        return {"database": db, "description": self.memories.descriptions.get(db, ""), "ddl": self.catalog.ddl(db),
                "tables": tables}

    def select_databases(self, arguments, call):
        question, k = arguments["question"], arguments.get("k", 5)
        selection = self.memories.selection
        given = arguments.get("parts")
        if given is not None and not any(part.strip() for part in given):
            raise ToolError("select_databases: every part is blank")
        parts = [part for part in given if part.strip()] if given else _relmem.question_parts(question)
        ranking = selection.select_parts(parts, k) if given else selection.select(question, k)
        chosen = selection.select_set_parts(parts) if given else selection.select_set(question)
        result = {"question": question, "parts": parts, "ranking": [views.database_match(m) for m in ranking],
                  "selected": [views.database_match(m)["database"] for m in chosen]}
        if len(parts) > 1:
            result["part_rankings"] = [{"part": part, "ranking": [views.database_match(m) for m in ranking]}
                                       for part, ranking in zip(parts, selection.select_batch(parts, k))]
        return result

    def find_values(self, arguments, call):
        db = self._database(arguments)
        values = self._values(db)
        text, k = arguments["text"], arguments.get("k", 10)
        table, column = arguments.get("table"), arguments.get("column")
        if column is not None and table is None:
            raise ToolError("find_values: give the table of the column too")
        if column is not None:
            if values.column(db, table, column) is None:
                raise ToolError(f"unknown column {table}.{column} in {db!r}; see describe_database")
            matches = [views.value_match(m) for m in values.lookup(db, table, column, text, k)]
        elif table is not None:
            columns = [c for t, c in views.indexed_columns(values, db) if t.lower() == table.lower()]
            if not columns and table.lower() not in (t.name.lower() for t in self.catalog.schema(db).tables):
                raise ToolError(f"unknown table {table!r} in {db!r}; see describe_database")
            matches = [views.value_match(m) for c in columns for m in values.lookup(db, table, c, text, k)]
        else:
            # The whole text as one span of link(): one encoder pass serves every column of the database.
            links = [views.value_link(link) for link in values.link(db, text, 4 * k, 0.0, max(1, len(text.split())))]
            widest = max((link["end"] - link["start"] for link in links), default=0)
            matches = [{name: link[name] for name in ("value", "score", "table", "column", "evidence")}
                       for link in links if link["end"] - link["start"] == widest]
        matches.sort(key=lambda m: -m["score"])
        return {"database": db, "text": text, "matches": matches[:k]}

    def link_values(self, arguments, call):
        db = self._database(arguments)
        values = self._values(db)
        question = arguments["question"]
        links = values.link(db, question, arguments.get("k", 10), arguments.get("min_score", 0.85))
        return {"database": db, "question": question, "links": [views.value_link(link) for link in links]}

    def check_sql(self, arguments, call):
        db = self._database(arguments)
        sql = arguments["sql"]
        diagnostics = [views.diagnostic(d) for d in inspect(sql, self.catalog, db)]
        checks, feedback = [], ""
        if self.memories.values is not None and db in self.memories.values:
            found, feedback = self.memories.values.check_values(sql, db, self.catalog)
            checks = [views.value_check(c) for c in found]
        ok = (not any(d["severity"] == "error" for d in diagnostics)
              and all(c["status"] == "found" for c in checks))
        return {"database": db, "ok": ok, "diagnostics": diagnostics, "value_checks": checks,
                "value_feedback": feedback}

    def run_sql(self, arguments, call):
        db = self._database(arguments)
        max_rows = arguments.get("max_rows", min(100, self.max_rows))  # the schema caps it at self.max_rows
        result = self.sandbox.execute(self.catalog.path(db), arguments["sql"], self.timeout, max_rows)
        if not result.ok:
            raise ToolError(f"run_sql {result.error_kind}: {result.error}")
        rows, used, reason = [], 2, None
        for row in result.rows:
            cells = [views.cell(v, self.max_cell_chars) for v in row]
            size = len(json.dumps(cells, ensure_ascii=False, default=str)) + 1
            if used + size > self.max_result_bytes:
                reason = f"the result exceeded {self.max_result_bytes} bytes"
                break
            rows.append(cells)
            used += size
        if reason is None and result.truncated:
            reason = f"the result has more than {max_rows} rows"
        answer = {"database": db, "columns": list(result.columns), "rows": rows, "row_count": len(rows),
                  "truncated": reason is not None, "elapsed_ms": round(result.seconds * 1000, 2)}
        if reason:
            answer["truncated_reason"] = reason
        return answer

    def ask(self, arguments, call):
        question = arguments["question"]
        llm, source = self.llm, "configured"
        if llm is None and call is not None and call.session.supports_sampling:
            llm, source = sampling_llm(call, self.sampling_timeout), "sampling"
        if llm is None:
            source = "none"
        memories = self.memories
        pipeline = Pipeline.default(self.catalog, llm, memories.selection, memories.values, memories.examples,
                                    descriptions=memories.descriptions, disable={"conversation"})
        state = pipeline.ask(question).to_dict()
        answer = {"question": question, "answer": state["answer"], "llm": source,
                  "results": json.loads(json.dumps(state["results"], default=str)),
                  "trace": json.loads(json.dumps(state["trace"], default=str))}
        if source == "none":
            answer["note"] = ("No LLM is available: the server has none configured (--llm-base-url/--llm-model) and "
                              "this client does not offer MCP sampling. Only the LLM-free stages ran (database "
                              "selection and value linking); no SQL was written.")
        return answer

    # --- resources -------------------------------------------------------------------------------------------
    def resources(self):
        return [{"uri": SCHEMA_URI.format(database=quote(db, safe="")), "name": f"{db} schema",
                 "title": f"Schema card of {db}", "mimeType": "text/plain",
                 "description": f"Tables, columns, keys and sample values of the database {db}"}
                for db in self.catalog.databases]

    def resource_templates(self):
        return [{"uriTemplate": SCHEMA_URI, "name": "database schema", "mimeType": "text/plain",
                 "description": "The schema card of one database of the served folder"}]

    def read_resource(self, uri):
        """The contents of relmem://<database>/schema, or None for any other URI."""
        prefix, suffix = "relmem://", "/schema"
        if not (uri.startswith(prefix) and uri.endswith(suffix)):
            return None
        db = unquote(uri[len(prefix):-len(suffix)])
        if db not in self.catalog:
            return None
        return {"uri": uri, "mimeType": "text/plain",
                "text": self.catalog.card(db, description=self.memories.descriptions.get(db, ""))}
