"""Runs the pipeline over an evaluation set: several questions in flight, one JSON line per finished item appended
and fsynced at once, so an interrupted run resumes without losing or repeating an item."""
import json
import os
import sys
import threading
import time
from collections import namedtuple
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from tqdm import tqdm

from .. import Error, outputs
from ..agent import Pipeline
from ..agent.config import PipelineConfig
from ..agent.stages.base import Stage
from ..agent.stages.context import AnswerDirectly
from .metrics import score

# What SelectDatabases reads from a selection memory's matches.
Match = namedtuple("Match", "database score probability")


class AllDatabases:
    """Stands in for the selection memory in the "no selection memory" ablation: every database is proposed, so
    every schema goes into the planning prompt."""

    def __init__(self, catalog):
        self.databases = list(catalog.databases)

    def select(self, question, k=None):
        return [Match(database, 0.0, 1.0) for database in self.databases]

    def select_parts(self, parts, k=None):
        return self.select(" ".join(parts), k)


class GoldDatabases:
    """Stands in for the selection memory in the "gold-ddl" baseline: each item's own databases, as a perfect
    selector would give them."""

    def __init__(self, items):
        self.by_question = {item.question: list(item.databases) for item in items}

    def select(self, question, k=None):
        return [Match(database, 1.0, 1.0) for database in self.by_question.get(question, [])]

    def select_parts(self, parts, k=None):
        return self.select(" ".join(parts), k)


class NoDatabases(Stage):
    """The "llm-only" baseline's first stage: every question is answered without the databases."""
    name = "no_databases"
    writes = ("needs_data",)

    def run(self, state):
        state.needs_data = False


# Baselines: the LLM with schemas in its prompt and nothing of relmem's between the plan and the answer.
BASELINE_OFF = {"context_switch", "examples", "value_memory", "refinement", "self_correction", "hybrid"}
CONDITIONS = {
    "relmem": "the full pipeline: selection memory, built schema context, value memory, inspection, correction",
    "llm-only": "the LLM answers every question without any database",
    "gold-ddl": "the LLM given the full DDL of each question's own databases (a perfect selector), no relmem "
                "stage between plan and answer",
    "top20-ddl": "the LLM given the full DDL of the selection memory's top-20 databases (a user with 20 databases "
                 "and no relmem), no relmem stage between plan and answer",
}


def make_pipeline(catalog, memories, llm, disable=(), all_schemas=False, condition="relmem", items=(),
                  constrained=True, **settings):
    """The default pipeline for evaluation: items are independent, so there is no conversation. `settings`:
    PipelineConfig fields (top_k, candidates, keep_candidates, context, decompose, context_switch, switch_view,
    repair_qualifiers, repair_joins, ...). all_schemas puts every database's full DDL into the prompts (the
    no-selection-memory ablation). `condition`: one of CONDITIONS; "gold-ddl" needs the `items`. `constrained`:
    replies decoded under their output contracts' grammars (PipelineConfig.constrained). The baselines gold-ddl and
    top20-ddl use the full DDL and no relmem stage between plan and answer: no repairs either."""
    if condition not in CONDITIONS:
        raise Error(f"unknown condition {condition!r} (known: {', '.join(CONDITIONS)})")
    if condition == "llm-only":
        return Pipeline([NoDatabases(), AnswerDirectly(llm, PipelineConfig(constrained=constrained))])
    if settings.get("candidates", "top_k") != "top_k" and (all_schemas or condition in ("gold-ddl", "top20-ddl")):
        raise Error(f"candidates={settings['candidates']!r} needs the selection memory's ranking "
                    f"(not --all-schemas, gold-ddl or top20-ddl)")
    selection = AllDatabases(catalog) if all_schemas else memories.selection
    config = {**settings, "constrained": constrained}
    if all_schemas:
        config["context"] = "full_ddl"
    off = set(disable) | {"conversation"}
    baseline = {"context": "full_ddl", "repair_qualifiers": False, "repair_joins": False, "repair_counts": False}
    if condition == "gold-ddl":
        selection, off = GoldDatabases(items), off | BASELINE_OFF
        config.update(baseline)
    elif condition == "top20-ddl":
        off = off | BASELINE_OFF
        config.update(baseline, top_k=20)
    return Pipeline.default(catalog, llm, selection, memories.values, memories.examples,
                            descriptions=memories.descriptions, config=config, disable=off, rows=memories.rows)


def written_ids(data, path):
    """(ids in order, the bytes that hold them) of an output's bytes `data`. A last line that is not a whole record
    (still being written, or cut short by an interruption) is left out; any other unreadable line is an error."""
    complete = data[:data.rfind(b"\n") + 1]
    ids = []
    for number, line in enumerate(complete.splitlines(), start=1):
        if line.strip():
            try:
                ids.append(json.loads(line)["id"])
            except (ValueError, KeyError, TypeError):
                raise Error(f"{path}, line {number} is not an evaluation record; not resuming from it") from None
    tail = data[len(complete):]
    if tail.strip():
        try:
            ids.append(json.loads(tail)["id"])
            complete = data
        except (ValueError, KeyError, TypeError):
            pass
    return ids, complete


def finished_ids(path):
    """Ids of the items a previous output holds. A last line cut short by an interruption is removed from the file
    (its item runs again); any other unreadable line is an error."""
    if not os.path.exists(path):
        return set()
    with open(path, "rb") as f:
        data = f.read()
    ids, complete = written_ids(data, path)
    if data[len(complete):].strip():
        with open(path, "r+b") as f:
            f.truncate(len(complete))
    if complete and not complete.endswith(b"\n"):
        with open(path, "ab") as f:
            f.write(b"\n")
    return set(ids)


def _tokens_by_stage(records):
    stages = {}
    for record in records:
        for call in record.get("llm_calls", []):
            tokens = stages.setdefault(call["stage"], {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
            tokens["calls"] += 1
            usage = call.get("usage") or {}
            tokens["prompt_tokens"] += usage.get("prompt_tokens", 0)
            tokens["completion_tokens"] += usage.get("completion_tokens", 0)
    return stages


def _compact(records):
    """The trace without the prompts themselves (their length is kept): prompts repeat the schemas every time."""
    compact = []
    for record in records:
        calls = [{**{k: v for k, v in call.items() if k != "messages"},
                  "prompt_chars": sum(len(str(m.get("content", ""))) for m in call.get("messages", []))}
                 for call in record.get("llm_calls", [])]
        compact.append({**record, "llm_calls": calls})
    return compact


def output_checks(records, results, catalog=None):
    """What constrained decoding is meant to prevent, counted for one question: LLM replies that did not parse (a
    format reminder followed), queries whose execution failed, and queries naming a table or column their database
    lacks (relmem.sql.inspect; needs the catalog)."""
    calls = [call for record in records for call in record.get("llm_calls", [])]
    checks = {"llm_calls": len(calls),
              "unparseable": sum(1 for call in calls if str(call.get("error") or "").startswith("malformed")),
              "queries": len(results), "failed_queries": sum(1 for result in results if result.get("error"))}
    if catalog is not None:
        from ..sql import inspect
        unknown = 0
        for result in results:
            if result["database"] in catalog:
                kinds = {d.kind for d in inspect(result["sql"], catalog, result["database"])}
                unknown += bool(kinds & {"unknown_table", "unknown_column"})
        checks["unknown_names"] = unknown
    return checks


def evaluate_item(pipeline, item, run, full_trace=False, catalog=None, local=None):
    """One output record: the item (with its gold), what the pipeline answered and did, and its cost. `local`: the
    LocalModel answering, alone (one question in flight), whose prompt tokens evaluated and reused from its KV
    cache are recorded as "local_model"."""
    before = local.stats.to_dict() if local else None
    start = time.perf_counter()
    state = pipeline.ask(item.question, remember=False)
    seconds = time.perf_counter() - start
    records = state.trace.to_list()
    results = state.results()
    record = {"id": item.id, "kind": item.kind, "run": run, "item": item.to_dict(), "answer": state.answer or "",
              "results": results, "candidates": [c.database for c in state.candidates],
              "planned": list(dict.fromkeys(t.database for t in state.targets)), "needs_data": state.needs_data,
              "seconds": round(seconds, 6), "tokens": _tokens_by_stage(records),
              "checks": output_checks(records, results, catalog),
              "trace": records if full_trace else _compact(records)}
    if local:
        after = local.stats.to_dict()
        record["local_model"] = {key: round(after[key] - before[key], 3) for key in
                                 ("calls", "prompt_tokens", "reused_prompt_tokens", "completion_tokens", "seconds",
                                  "loops_broken")}
    return record


class _Output:
    """Appends records to the output, one line each, written through to the disk before the next. The file is new
    (relmem.outputs), or the output an earlier run wrote, continued with --resume OUT --out OUT."""

    def __init__(self, path, continued):
        self.path = path
        self.lock = threading.Lock()
        if not continued:
            self.file = outputs.open_new_for_append(path)
            return
        try:
            self.file = open(path, "a", encoding="utf-8")
        except OSError as error:
            raise Error(f"cannot write {path}: {error.strerror}") from None

    def write(self, record):
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self.lock:
            self.file.write(line)
            self.file.flush()
            os.fsync(self.file.fileno())

    def copy_finished(self, source):
        """The whole records of an earlier output (a cut-off last line is left out)."""
        with open(source, "rb") as f:
            data = f.read()
        with self.lock:
            self.file.write(data[:data.rfind(b"\n") + 1].decode("utf-8"))
            self.file.flush()
            os.fsync(self.file.fileno())

    def close(self):
        self.file.close()


def run_items(pipeline, items, out, run, concurrency=1, resume=None, full_trace=False, progress=True, catalog=None,
              local=None):
    """Evaluates the items not yet in `out` with `concurrency` questions in flight. `resume`: a previous output
    whose finished items are kept (copied into `out` when it is another file) and not run again. `catalog`: the
    databases, for the check of the names the queries use (output_checks). `local`: the LocalModel answering,
    whose KV-cache reuse each record counts when one question is in flight. Returns
    {"done", "skipped", "seconds", "answer_accuracy"} of this call."""
    if concurrency < 1:
        raise Error("--concurrency must be at least 1")
    if resume is None and os.path.exists(out) and os.path.getsize(out) > 0:
        raise Error(f"{out} already holds results: pass --resume {out} to continue it, or choose another --out")
    done_ids = set()
    continued = resume is not None and os.path.realpath(resume) == os.path.realpath(out)
    if resume is not None:
        done_ids = finished_ids(resume)
    output = _Output(out, continued)
    if resume is not None and not continued:
        output.copy_finished(resume)
    todo = [item for item in items if item.id not in done_ids]
    alone_local = local if concurrency == 1 else None
    bar = tqdm(total=len(todo), desc="eval", unit="q", disable=not progress, file=sys.stderr)
    correct = finished = 0
    start = time.perf_counter()
    pending = iter(todo)
    try:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            running = {pool.submit(evaluate_item, pipeline, item, run, full_trace, catalog, alone_local)
                       for item in _take(pending, concurrency)}
            while running:
                ready, running = wait(running, return_when=FIRST_COMPLETED)
                for future in ready:
                    record = future.result()
                    output.write(record)
                    finished += 1
                    correct += score(record)["answer"]
                    bar.update(1)
                    bar.set_postfix(answer_accuracy=f"{correct / finished:.3f}", refresh=False)
                running |= {pool.submit(evaluate_item, pipeline, item, run, full_trace, catalog, alone_local)
                            for item in _take(pending, len(ready))}
    finally:
        bar.close()
        output.close()
    return {"done": finished, "skipped": len(items) - len(todo), "seconds": round(time.perf_counter() - start, 3),
            "answer_accuracy": round(correct / finished, 4) if finished else None}


def _take(iterator, n):
    return [item for _, item in zip(range(n), iterator)]
