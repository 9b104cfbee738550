"""Latency of every MCP tool over the stdio transport: spawns `relmem serve`, calls each tool with valid arguments
on many databases, and reports the median and 90th percentile milliseconds per call, measured by the client from
sending the request to reading its response.

    relmem bench mcp --dbs DIR --memory MEMDIR [--calls 100] [--questions dev.json] --json

`ask` is left out (its time is the LLM's); `run_sql` runs a cheap query (`SELECT * FROM t LIMIT 10`).
"""
import json
import os
import random
import statistics
import sys
import time

from .. import Catalog
from ..mcp.client import StdioClient

TOOLS = ["list_databases", "describe_database", "select_databases", "find_values", "link_values", "check_sql",
         "run_sql"]


def add_arguments(parser):
    parser.add_argument("--dbs", required=True, metavar="DIR", help="folder of SQLite databases")
    parser.add_argument("--memory", default=None, metavar="MEMDIR",
                        help="memories saved by `relmem index` (default: the server builds them at start)")
    parser.add_argument("--calls", type=int, default=100, help="calls per tool (default 100)")
    parser.add_argument("--questions", default=None, metavar="FILE",
                        help="Spider-style JSON list of {question, db_id} (default: questions made from table names)")
    parser.add_argument("--seed", type=int, default=0)


def _text_samples(catalog, db):
    """(table, column, value) of one stored text value per text column of `db`."""
    samples = []
    for table in catalog.schema(db).tables:
        for column in table.columns:
            if "char" in column.type.lower() or "text" in column.type.lower():
                values = [v for v in catalog.distinct_values(db, table.name, column.name, 5) if isinstance(v, str)]
                if values and len(values[0]) < 60:
                    samples.append((table.name, column.name, values[0]))
    return samples


def _questions(path, catalog, rng, n):
    if path:
        with open(path, encoding="utf-8") as f:
            items = [(q["question"], q["db_id"]) for q in json.load(f) if q.get("db_id") in catalog]
        return rng.sample(items, min(n, len(items)))
    out = []
    for db in catalog.databases:
        for table in catalog.schema(db).tables:
            out.append((f"How many {table.name.replace('_', ' ')} are there?", db))
    return rng.sample(out, min(n, len(out)))


def _arguments(catalog, args):
    """Per tool, `calls` argument objects over databases drawn at random."""
    rng = random.Random(args.seed)
    databases = [db for db in (rng.choice(catalog.databases) for _ in range(args.calls)) if catalog.schema(db).tables]
    samples = {db: _text_samples(catalog, db) for db in set(databases)}
    calls = {"list_databases": [{} for _ in databases],
             "describe_database": [{"database": db} for db in databases],
             "select_databases": [{"question": q, "k": 5}
                                  for q, _ in _questions(args.questions, catalog, rng, args.calls)],
             "link_values": [{"database": db, "question": q}
                             for q, db in _questions(args.questions, catalog, rng, args.calls)],
             "find_values": [], "check_sql": [], "run_sql": []}
    for db in databases:
        first = catalog.schema(db).tables[0].name
        calls["run_sql"].append({"database": db, "sql": f'SELECT * FROM "{first}" LIMIT 10', "max_rows": 10})
        if samples[db]:
            table, column, value = rng.choice(samples[db])
            text = value.lower()  # written differently from how it is stored
            where = {"table": table, "column": column} if rng.random() < 0.5 else {}
            calls["find_values"].append({"database": db, "text": text, "k": 5, **where})
            literal = text.replace("'", "''")
            calls["check_sql"].append({"database": db,
                                       "sql": f'SELECT * FROM "{table}" WHERE "{column}" = \'{literal}\''})
    return calls


def run(args):
    catalog = Catalog(args.dbs)
    calls = _arguments(catalog, args)
    command = [sys.executable, "-m", "relmem.cli", "serve", "--dbs", args.dbs]
    if args.memory:
        command += ["--memory", args.memory]
    started = time.perf_counter()
    report = {"benchmark": "mcp", "transport": "stdio", "databases": len(catalog), "calls_per_tool": args.calls,
              "tools": {}}
    with StdioClient(command, env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}) \
            as client:
        client.initialize()
        client.request("tools/list", timeout=600)
        report["startup_seconds"] = round(time.perf_counter() - started, 3)
        for tool in TOOLS:
            times, errors = [], 0
            for arguments in calls[tool]:
                sent = time.perf_counter()
                reply = client.call(tool, arguments, timeout=600)
                times.append((time.perf_counter() - sent) * 1000)
                errors += bool(reply.get("error") or reply["result"].get("isError"))
            times.sort()
            report["tools"][tool] = {"calls": len(times), "errors": errors,
                                     "median_ms": round(statistics.median(times), 3),
                                     "p90_ms": round(times[int(0.9 * (len(times) - 1))], 3),
                                     "max_ms": round(times[-1], 3)}
    report["max_median_ms"] = max(t["median_ms"] for t in report["tools"].values())
    return report
