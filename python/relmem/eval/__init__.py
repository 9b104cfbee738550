"""End-to-end evaluation of the pipeline, as in the seed paper: compose a set of questions that need zero, one or
several databases, run the pipeline on each with any LLM (or the gold simulator), and report answer accuracy, SQL
execution accuracy, database selection, the context switch, tokens and time per group of questions. The scripted
stand-ins for an LLM live here too: the gold simulator, and the oracle filler answering hybrid fill requests from
SWAN's original databases (C++, built as relmem_evaluation).

    items = build_set("shared/data/spider", "shared/data/zero_db", parse_counts(["500"]))
    pipeline = make_pipeline(catalog, memories, llm)             # disable=, condition=, PipelineConfig fields
    run_items(pipeline, items, "out.jsonl", run={"label": "my-model"}, concurrency=8)
    report(["out.jsonl"])                                         # markdown(...), plot(..., folder)
"""
from .._relmem.evaluation import OracleFiller
from .compose import build_set, parse_counts
from .gold_simulator import GoldSimulator
from .items import Item, Part, load_set, write_set
from .metrics import answer_correct, score
from .report import markdown, plot, report
from .runner import AllDatabases, make_pipeline, run_items

__all__ = ["AllDatabases", "GoldSimulator", "Item", "OracleFiller", "Part", "answer_correct", "build_set",
           "load_set", "make_pipeline", "markdown", "parse_counts", "plot", "report", "run_items", "score",
           "write_set"]
