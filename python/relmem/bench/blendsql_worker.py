"""Runs BlendSQL queries with BlendSQL itself, for `relmem bench swan --mode blendsql`. It runs under the Python of
the separate BlendSQL environment (scripts/install_blendsql.sh) and imports nothing of relmem.

    python blendsql_worker.py --gguf MODEL.gguf [--threads N] [--context N]

Loads the GGUF model in process (blendsql.models.LlamaCpp, llama.cpp through guidance), prints one JSON line
naming the versions, then reads one JSON request per line ({"id", "db", "query"}) and answers each with one JSON
line: {"id", "columns", "rows", "prompt_tokens", "completion_tokens", "calls", "seconds"} or {"id", "error"}.
"""
import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm (imported by blendsql) stays offline


def _plain(value):
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is not None and not isinstance(value, (int, float, str, bool)):
        return str(value)
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--context", type=int, default=8192)
    args = parser.parse_args()
    from importlib.metadata import version

    import blendsql
    from blendsql.models import LlamaCpp
    model = LlamaCpp(filename=args.gguf, caching=True,  # its response cache: new per run (swan_blendsql.Worker)
                     config={"n_ctx": args.context, "n_threads": args.threads, "seed": 0})
    print(json.dumps({"ready": True, "blendsql": version("blendsql"), "guidance": version("guidance"),
                      "llama_cpp_python": version("llama_cpp_python")}), flush=True)
    engines = {}
    for line in sys.stdin:
        request = json.loads(line)
        started = time.perf_counter()
        try:
            if request["db"] not in engines:
                engines[request["db"]] = blendsql.BlendSQL(request["db"], model=model)
            smoothie = engines[request["db"]].execute(request["query"])
            frame = smoothie.df
            answer = {"columns": [str(c) for c in frame.columns],
                      "rows": [[_plain(v) for v in row] for row in frame.itertuples(index=False, name=None)],
                      "prompt_tokens": smoothie.meta.prompt_tokens,
                      "completion_tokens": smoothie.meta.completion_tokens,
                      "calls": smoothie.meta.num_generation_calls}
        except Exception as error:  # noqa: BLE001 - any failure of BlendSQL is this query's error
            answer = {"error": f"{type(error).__name__}: {error}"[:2000]}
        answer.update(id=request["id"], seconds=time.perf_counter() - started)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
