"""`relmem serve` (the MCP server) and `relmem tools` (function-calling definitions).

    relmem serve --dbs DIR [--memory MEMDIR] [--http PORT] [--timeout S] [--max-rows N] [--llm-base-url URL ...]
    relmem tools --format openai|anthropic
"""
import json
import logging
import sys

from .. import __version__
from ..llm import add_llm_arguments, from_args
from .definitions import define_tools
from .function_calling import FORMATS, function_definitions
from .http import HttpServer
from .server import McpServer
from .stdio import serve_stdio
from .toolbox import Toolbox


def register(commands):
    p = commands.add_parser("serve", help="serve a folder of databases to MCP clients (stdio, or HTTP on loopback)")
    p.add_argument("--dbs", required=True, metavar="DIR", help="folder of SQLite databases to serve")
    p.add_argument("--memory", default=None, metavar="MEMDIR",
                   help="memories saved by `relmem index` (default: built at start)")
    p.add_argument("--encoder", default=None, metavar="SPEC", help="encoder when building memories at start")
    p.add_argument("--http", type=int, default=None, metavar="PORT",
                   help="serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0: any free port)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds per run_sql statement (default 5)")
    p.add_argument("--max-rows", type=int, default=1000, help="most rows run_sql returns (default 1000)")
    p.add_argument("--max-result-bytes", type=int, default=1 << 20,
                   help="most bytes of rows run_sql returns (default 1 MiB)")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    add_llm_arguments(p)
    p.set_defaults(func=run_serve)

    p = commands.add_parser("tools", help="print relmem's tools as function-calling JSON")
    p.add_argument("--format", choices=FORMATS, default="openai")
    p.add_argument("--timeout", type=float, default=5.0, help="run_sql's time limit to state (default 5)")
    p.add_argument("--max-rows", type=int, default=1000, help="run_sql's row limit to state (default 1000)")
    p.set_defaults(func=run_tools)


def run_serve(args):
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="relmem serve: %(message)s")
    toolbox = Toolbox.open(args.dbs, memory=args.memory, encoder=args.encoder, llm=from_args(args),
                           progress=sys.stderr.isatty(), timeout=args.timeout, max_rows=args.max_rows,
                           max_result_bytes=args.max_result_bytes)
    server = McpServer(toolbox, version=__version__)
    with toolbox:
        if args.http is None:
            serve_stdio(server)
            return 0
        with HttpServer(server, port=args.http) as http:
            print(f"relmem serve: MCP (Streamable HTTP) at {http.url}", file=sys.stderr, flush=True)
            try:
                http.serve_forever()
            except KeyboardInterrupt:
                pass
    return 0


def run_tools(args):
    tools = define_tools(timeout=args.timeout, max_rows=args.max_rows)
    print(json.dumps(function_definitions(tools, args.format), indent=1, ensure_ascii=False))
    return 0
