"""The `relmem` command line."""
import argparse
import importlib
import json
import sys

from . import Catalog, Error, execute_readonly
from .agent import commands as agent_commands
from .bench import BENCHMARKS
from .demo import job as demo_job
from .eval import commands as eval_commands
from .mcp import commands as mcp_commands
from . import values_cli


def _catalog(args):
    catalog = Catalog(args.dir)
    for path, reason in catalog.skipped:
        print(f"skipped {path}: {reason}", file=sys.stderr)
    for db in catalog.databases:
        schema = catalog.schema(db)
        print(f"{db} ({len(schema.tables)} tables)")
        for table in schema.tables:
            print(f"  {table.name}: {', '.join(c.name for c in table.columns)} [{table.row_count} rows]")
    return 0


def _print_rows(columns, rows, limit):
    print(" | ".join(columns))
    for row in rows[:limit]:
        print(" | ".join("NULL" if v is None else str(v) for v in row))
    if len(rows) > limit:
        print(f"... {len(rows) - limit} more rows")


def _sql(args):
    result = execute_readonly(args.db_path, args.sql, timeout=args.timeout, max_rows=args.max_rows)
    if not result.ok:
        print(f"relmem sql: {result.error_kind}: {result.error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"columns": result.columns, "rows": result.rows, "truncated": result.truncated},
                         default=str))
    else:
        _print_rows(result.columns, result.rows, args.max_print)
    return 0


def _demo(args):
    return demo_job.run_args(args)


def _bench(args):
    module = importlib.import_module(BENCHMARKS[args.benchmark])
    report = module.run(args)
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="relmem", description="Relational databases as external memory for LLMs")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("catalog", help="list the databases and tables of a folder")
    p.add_argument("dir")
    p.set_defaults(func=_catalog)

    p = commands.add_parser("sql", help="run one read-only SELECT on a SQLite file")
    p.add_argument("db_path")
    p.add_argument("sql")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds")
    p.add_argument("--max-rows", type=int, default=10000)
    p.add_argument("--max-print", type=int, default=50)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_sql)

    agent_commands.register(commands)  # index, ask
    eval_commands.register(commands)  # eval build, run, report
    mcp_commands.register(commands)  # serve, tools
    values_cli.register(commands)  # values aliases

    p = commands.add_parser("demo", help="the main demo job on the built-in demo collection")
    demo_job.add_arguments(p)
    p.set_defaults(func=_demo)

    p = commands.add_parser("bench", help="benchmarks with JSON output")
    benches = p.add_subparsers(dest="benchmark", required=True)
    for name, module_name in BENCHMARKS.items():
        b = benches.add_parser(name)
        importlib.import_module(module_name).add_arguments(b)
        b.add_argument("--json", action="store_true", help="one-line JSON")
    p.set_defaults(func=_bench)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Error as e:
        print(f"relmem {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
