"""SQL front end on Spider's gold queries: how many parse, render to a fixed point and (with --execute) return the
gold rows after re-rendering and after rewriting every literal to itself; what the static detector reports on them
(queries per diagnostic kind, and whether SQLite itself rejects the queries given error-level diagnostics); and
parse/inspect throughput in queries per second.
"""
import collections
import json
import os
import time
from pathlib import Path

import relmem
import relmem.sql

DEFAULT_SPIDER = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "spider"
SPLITS = {"dev": ["dev.json"], "train": ["train_spider.json"], "all": ["dev.json", "train_spider.json"]}


def add_arguments(parser):
    parser.add_argument("--spider", default=os.environ.get("RELMEM_SPIDER", str(DEFAULT_SPIDER)),
                        help="Spider folder with dev.json, train_spider.json and database/")
    parser.add_argument("--split", choices=sorted(SPLITS), default="all")
    parser.add_argument("--execute", action="store_true",
                        help="also execute gold, re-rendered and self-rewritten queries and compare their rows")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per executed query")


def _load(spider, split):
    queries = []
    for name in SPLITS[split]:
        queries += [(item["db_id"], item["query"]) for item in json.loads((spider / name).read_text())]
    return queries


def _rewritten_to_itself(query):
    replacements = {}
    for literal in query.literals:
        if literal.kind == "string":
            replacements[literal.index] = literal.value
        elif literal.kind == "null":
            replacements[literal.index] = None
        elif literal.kind == "number":
            try:
                replacements[literal.index] = int(literal.value, 0)
            except ValueError:
                replacements[literal.index] = float(literal.value)
    return query.rewrite_literals(replacements)


def _timed(fn, items):
    start = time.perf_counter()
    for item in items:
        fn(item)
    seconds = time.perf_counter() - start
    return round(len(items) / seconds, 1) if seconds > 0 else None


def run(args):
    spider = Path(args.spider)
    if not (spider / "dev.json").exists():
        raise relmem.Error(f"no Spider data under {spider}")
    queries = _load(spider, args.split)
    catalog = relmem.Catalog(str(spider / "database"))
    available = set(catalog.databases)

    report = {"queries": len(queries), "parsed": 0, "render_fixed_point": 0, "parse_failures": []}
    parsed = []
    for db, sql in queries:
        try:
            query = relmem.sql.parse(sql, catalog, db) if db in available else relmem.sql.parse(sql)
        except relmem.Error as error:
            report["parse_failures"].append({"db": db, "sql": sql, "error": str(error)})
            continue
        report["parsed"] += 1
        rendered = query.render()
        report["render_fixed_point"] += relmem.sql.parse(rendered).render() == rendered
        parsed.append((db, sql, query))

    with_schema = [(db, sql, query) for db, sql, query in parsed if db in available]
    report["databases_missing"] = sorted({db for db, _, _ in parsed if db not in available})
    queries_per_kind = collections.Counter()
    flagged = []
    for db, sql, query in with_schema:
        diagnostics = query.inspect()
        queries_per_kind.update({d.kind for d in diagnostics})
        if any(d.severity == "error" for d in diagnostics):
            flagged.append((db, sql, diagnostics))
    report["inspected"] = len(with_schema)
    report["queries_per_diagnostic_kind"] = dict(sorted(queries_per_kind.items()))
    report["queries_with_error_level"] = len(flagged)
    report["error_level_queries_sqlite_rejects"] = sum(not catalog.execute(db, sql).ok for db, sql, _ in flagged)
    report["error_level_examples"] = [{"db": db, "sql": sql, "diagnostic": repr(d[0])} for db, sql, d in flagged[:5]]

    texts = [sql for _, sql, _ in parsed]
    report["parse_per_second"] = _timed(relmem.sql.parse, texts)
    schemas = {db: catalog.schema(db) for db in available}
    report["inspect_per_second"] = _timed(lambda item: relmem.sql.inspect(item[1], schemas[item[0]]),
                                          [(db, sql) for db, sql, _ in with_schema])

    if args.execute:
        report["execution"] = _execute(catalog, with_schema, args.timeout)
    return report


def _execute(catalog, parsed, timeout):
    counts = collections.Counter()
    mismatches = []
    for db, sql, query in parsed:
        gold = catalog.execute(db, sql, timeout=timeout)
        if not gold.ok:
            counts["gold_failed"] += 1
            continue
        counts["compared"] += 1
        for name, text in (("rendered", query.render()), ("rewritten", _rewritten_to_itself(query))):
            again = catalog.execute(db, text, timeout=timeout)
            same = again.ok and again.rows == gold.rows
            counts[f"{name}_same_rows"] += same
            if not same and len(mismatches) < 10:
                mismatches.append({"db": db, "sql": sql, name: text, "error": again.error})
    return {**dict(counts), "mismatches": mismatches}
