"""Throwaway PostgreSQL and MariaDB servers holding the 20 Spider dev databases, for benchmarks and trying relmem on
a server: started as the engine tests start them (tests/python/engine_servers.py), their SELECT-only URLs written to
a new file, stopped and removed on Ctrl-C or SIGTERM.

    .venv/bin/python scripts/serve_spider_dev.py --urls /tmp/spider_servers.json &
    relmem bench selection --dbs "$(jq -r .postgresql /tmp/spider_servers.json)" ...
"""
import argparse
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
import engine_servers  # noqa: E402

STARTERS = {"postgresql": (engine_servers.postgres_server, engine_servers.postgres_missing),
            "mysql": (engine_servers.mariadb_server, engine_servers.mariadb_missing)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", required=True, help="new JSON file for {engine: reader URL}")
    parser.add_argument("--engines", default="postgresql,mysql", help="comma-separated: postgresql, mysql")
    parser.add_argument("--databases", default=str(ROOT.parent / "shared" / "data" / "spider" / "database"))
    args = parser.parse_args()
    if os.path.exists(args.urls):
        parser.error(f"{args.urls} exists; name a new file")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with contextlib.ExitStack() as stack:
        urls = {}
        for engine in args.engines.split(","):
            start, missing = STARTERS[engine]
            if missing():
                parser.error(missing())
            began = time.perf_counter()
            server = stack.enter_context(start())
            engine_servers.load_dev_databases(server, args.databases)
            urls[engine] = server.reader_url
            print(f"{engine}: {len(engine_servers.DEV_DBS)} databases loaded in {time.perf_counter() - began:.0f} s",
                  flush=True)
        with open(args.urls, "x", encoding="utf-8") as f:
            json.dump(urls, f)
        stack.callback(os.unlink, args.urls)
        print(f"serving; reader URLs in {args.urls}", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
