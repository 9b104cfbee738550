"""The `relmem` command line."""
import argparse
import importlib
import json
import os
import sys

from . import Error, execute_readonly
from .agent import commands as agent_commands
from .bench import BENCHMARKS
from .demo import job as demo_job
from .engines import is_server_url, open_catalog
from .eval import commands as eval_commands
from .mcp import commands as mcp_commands
from . import values_cli
from .typed_json import json_rows, text_value


def _catalog(args):
    catalog = open_catalog(args.dir)
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
        print(" | ".join(text_value(v) for v in row))
    if len(rows) > limit:
        print(f"... {len(rows) - limit} more rows")


def _sql(args):
    if is_server_url(args.db_path):
        catalog = open_catalog([args.db_path])
        if len(catalog) != 1:
            raise Error(f"{args.db_path} names {len(catalog)} databases; name one in the URL's path")
        result = catalog.execute(catalog.databases[0], args.sql, timeout=args.timeout, max_rows=args.max_rows,
                                 max_bytes=args.max_bytes)
        catalog.close()
    else:
        result = execute_readonly(args.db_path, args.sql, timeout=args.timeout, max_rows=args.max_rows,
                                  max_bytes=args.max_bytes)
    if not result.ok:
        _fail("sql", f"{result.error_kind}: {result.error}")
        return 1
    if args.json:
        print(json.dumps({"columns": result.columns, "rows": json_rows(result.rows), "truncated": result.truncated},
                         ensure_ascii=False))
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

    p = commands.add_parser("catalog", help="list the databases and tables of folders, files and server URLs")
    p.add_argument("dir", nargs="+", metavar="SOURCE",
                   help="a folder of SQLite databases, a SQLite file, or postgresql://... / mysql://...")
    p.set_defaults(func=_catalog)

    p = commands.add_parser("sql", help="run one read-only SELECT on a SQLite file or a server database")
    p.add_argument("db_path", metavar="DATABASE", help="a SQLite file, or a server URL naming one database")
    p.add_argument("sql")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds")
    p.add_argument("--max-rows", type=int, default=10000)
    p.add_argument("--max-bytes", type=int, default=64 << 20, help="result size limit (text and blob bytes)")
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


def _fail(command, message):
    """One line on stderr, whatever the message holds."""
    line = " ".join(str(message).split())
    print(f"relmem {command}: {line}", file=sys.stderr)


def _silence_stdout():
    """After a broken pipe (`relmem catalog DIR | head`), stdout goes nowhere, so that Python's own flush at exit
    raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv=None):
    """Runs one command. Every failure ends in one line on stderr and a non-zero exit, never a traceback
    (RELMEM_TRACEBACK=1 shows it for unexpected errors)."""
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()
        return status
    except Error as e:
        _fail(args.command, e)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except MemoryError:
        _fail(args.command, "out of memory")
        return 2
    except OSError as e:
        _fail(args.command, f"{e.strerror or e}{': ' + str(e.filename) if e.filename else ''}")
        return 2
    except Exception as e:  # a bug in relmem: still one line, with what it was
        if os.environ.get("RELMEM_TRACEBACK"):
            raise
        _fail(args.command, f"internal error: {type(e).__name__}: {e}")
        return 3


if __name__ == "__main__":
    sys.exit(main())
