"""The local LLM's speed on relmem's own prompts: prompt tokens per second cold and with the KV cache holding the
shared prefix, generation tokens per second free and under the SQL grammar, and how often the grammar needed the
whole vocabulary checked.

    relmem bench llm [--llm-gguf PATH] [--repeats 3] --json

The prompt is the planning prompt over the demo collection's databases; two questions share its system part.
"""
import os
import tempfile
import time

from .. import Catalog
from ..agent.schemas import schema_text
from ..contracts import CONTRACTS
from ..demo.collection import DESCRIPTIONS, build_collection
from ..llm.local import LocalModel
from ..prompt_templates import render_prompt

QUESTIONS = ("How many female singers are older than 30?", "Which singers are from France? List their names.")


def add_arguments(parser):
    parser.add_argument("--llm-gguf", default=None, metavar="PATH", help="GGUF model (default: the installed one)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every core)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each measurement; the median is reported")


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


def run(args):
    with tempfile.TemporaryDirectory(prefix="relmem-bench-llm-") as scratch:
        return _measure(args, os.path.join(scratch, "demo"))


def _measure(args, folder):
    build_collection(folder)
    catalog = Catalog(folder)
    model = LocalModel.open(args.llm_gguf, threads=args.threads)
    databases = ["singers", "restaurants"]
    schemas = "\n\n".join(schema_text(catalog, db, DESCRIPTIONS.get(db, "")) for db in databases)
    shown = {db: {t.name: [c.name for c in t.columns] for t in catalog.schema(db).tables} for db in databases}
    grammar = CONTRACTS["plan"].grammar(schemas=shown)
    messages = [render_prompt("plan", schemas=schemas, question=q) for q in QUESTIONS]
    decoder = model._decoder
    cold, warm, free, constrained = [], [], [], []
    for _ in range(args.repeats):
        model([{"role": "user", "content": "Hello."}], max_tokens=1)  # the KV cache now holds another prompt
        cold.append(_timed(model, messages[0], max_tokens=1))
        warm.append(_timed(model, messages[1], max_tokens=1))
        free.append(_timed(model, messages[0], max_tokens=64, generate=True))
        steps, full = decoder.constrained_steps, decoder.full_checks
        constrained.append(_timed(model, messages[1], max_tokens=64, generate=True, grammar=grammar))
        constrained[-1].update(steps=decoder.constrained_steps - steps, full_checks=decoder.full_checks - full)
    return {"model": model.description, "threads": model.threads, "context": model.context,
            "prompt_tokens": cold[0]["prompt_tokens"],
            "cold_prompt_tokens_per_second": _median(r["prompt_per_second"] for r in cold),
            "warm_prompt_tokens_per_second": _median(r["prompt_per_second"] for r in warm),
            "warm_reused_tokens": _median(r["reused"] for r in warm),
            "free_tokens_per_second": _median(r["generated_per_second"] for r in free),
            "constrained_tokens_per_second": _median(r["generated_per_second"] for r in constrained),
            "constrained_full_vocabulary_checks": sum(r["full_checks"] for r in constrained),
            "constrained_steps": sum(r["steps"] for r in constrained),
            "constrained_reply": constrained[-1]["text"], "repeats": args.repeats}


def _timed(model, messages, max_tokens, generate=False, grammar=None):
    before = model.stats.reused_prompt_tokens
    tokens = len(model.prompt_tokens(messages))
    started = time.perf_counter()
    if generate:
        # the prompt is cached by the measurement before: what is timed is decoding
        model(messages, max_tokens=1)
        started = time.perf_counter()
    reply = model(messages, max_tokens=max_tokens, grammar=grammar)
    seconds = time.perf_counter() - started
    reused = model.stats.reused_prompt_tokens - before
    out = {"prompt_tokens": tokens, "reused": reused, "text": reply.text}
    if generate:
        out["generated_per_second"] = round(reply.usage.completion_tokens / seconds, 2)
    else:
        out["prompt_per_second"] = round((tokens - reused) / seconds, 1)
    return out
