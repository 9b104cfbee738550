"""Wall time of `relmem eval run` with 1 and with N questions in flight, against the loopback test server
(tests/python/fake_llm_server.py) answering as the gold simulator after sleeping --delay seconds per request.

    .venv/bin/python scripts/eval_concurrency.py --set set.jsonl --dbs DIR --memory MEMDIR --limit 60 --concurrency 8

Prints one JSON object: seconds per concurrency, the speedup, requests served and answer accuracy of each run.
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from fake_llm_server import FakeLLMServer, Rule  # noqa: E402

import relmem  # noqa: E402
from relmem.agent import Memories  # noqa: E402
from relmem.eval import GoldSimulator, load_set, make_pipeline, run_items  # noqa: E402
from relmem.llm import OpenAIChat  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", required=True, dest="set_path")
    parser.add_argument("--dbs", required=True)
    parser.add_argument("--memory", required=True)
    parser.add_argument("--limit", type=int, default=60, help="items, spread over the set")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    items = load_set(args.set_path)
    items = items[::max(1, len(items) // args.limit)][:args.limit]  # every kind, as the set mixes them
    catalog = relmem.Catalog(args.dbs)
    memories = Memories.load(args.memory)
    simulator = GoldSimulator(items)
    rule = Rule(reply=lambda request: simulator(request.messages, stage=request.stage), delay=args.delay)
    report = {"items": len(items), "delay": args.delay, "runs": {}}
    with FakeLLMServer([rule], lifetime=3600, max_requests=10 ** 6) as server, tempfile.TemporaryDirectory() as tmp:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0, timeout=30)
        pipeline = make_pipeline(catalog, memories, llm)
        for concurrency in (1, args.concurrency):
            served = len(server.requests)
            start = time.perf_counter()
            summary = run_items(pipeline, items, os.path.join(tmp, f"c{concurrency}.jsonl"), {"label": "loopback"},
                                concurrency=concurrency, progress=False)
            report["runs"][concurrency] = {"seconds": round(time.perf_counter() - start, 3),
                                           "requests": len(server.requests) - served,
                                           "answer_accuracy": summary["answer_accuracy"]}
    report["speedup"] = round(report["runs"][1]["seconds"] / report["runs"][args.concurrency]["seconds"], 2)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
