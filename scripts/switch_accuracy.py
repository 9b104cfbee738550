"""How often a context switch sends questions to the databases, on training questions that need a database and on
questions that need none.

    python scripts/switch_accuracy.py --memory MEMDIR --dbs ../shared/data/spider/database \
        --spider ../shared/data/spider --zero-db ../shared/data/zero_db --exclude docs/eval/llm/set.jsonl \
        --count 30 [--switch llm --switch-view collection|candidates] [LLM flags]

Questions: --count of train_spider.json and --count of zero_db (SQuAD 2.0 passages and CommonsenseQA, written as
`relmem eval build` writes them, without those of any --exclude set), each drawn with --seed. Only the switch runs
(after the selection stage, where it needs its candidates). Prints JSON: per group, the share sent to the databases,
and seconds per question. Spider dev is not read.
"""
import argparse
import json
import time

from relmem import llm as llms
from relmem.agent import ContextSwitch, Memories, Pipeline, PipelineConfig, SelectDatabases, SelectionSwitch, State
from relmem.engines import open_catalog
from relmem.eval.compose import switch_questions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", required=True, metavar="MEMDIR")
    parser.add_argument("--dbs", required=True)
    parser.add_argument("--spider", required=True)
    parser.add_argument("--zero-db", required=True)
    parser.add_argument("--exclude", action="append", default=[], metavar="SET.jsonl")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--switch", choices=("llm", "selection"), default="llm")
    parser.add_argument("--switch-view", choices=("collection", "candidates"), default="collection")
    llms.add_llm_arguments(parser)
    args = parser.parse_args()
    catalog, memories = open_catalog(args.dbs), Memories.load(args.memory)
    config = PipelineConfig(context_switch=args.switch, switch_view=args.switch_view)
    if args.switch == "selection":
        stages = [SelectionSwitch(memories.selection, config)]
    else:
        switch = ContextSwitch(llms.from_args(args), catalog, config, memories.descriptions)
        stages = [SelectDatabases(memories.selection, config), switch] if args.switch_view == "candidates" else [switch]
    pipeline = Pipeline(stages)
    report = {"switch": args.switch, "switch_view": args.switch_view if args.switch == "llm" else None}
    for group, texts in switch_questions(args.spider, args.zero_db, args.count, args.seed, args.exclude).items():
        start, sent = time.perf_counter(), 0
        for text in texts:
            state = pipeline.run(State(text))
            sent += bool(state.needs_data)
        report[group] = {"n": len(texts), "sent_to_databases": round(sent / len(texts), 4),
                         "seconds_per_question": round((time.perf_counter() - start) / len(texts), 3)}
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
