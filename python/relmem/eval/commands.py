"""`relmem eval build | run | report`: the seed paper's experiments as commands.

    relmem eval build --spider DIR --zero-db DIR --out SET.jsonl [--n 500 | --n single=200,double=100] [--seed S]
    relmem eval run --set SET.jsonl --dbs DIR [--memory MEMDIR] [--llm gold-simulator | LLM flags]
                    [--condition relmem|llm-only|gold-ddl|top20-ddl] [--free] [--kind K] [--per-kind N]
                    [--disable SWITCH] [--top-k K] [--candidates top_k|selected] [--keep-candidates]
                    [--context-switch llm|selection] [--switch-view collection|candidates] [--no-repair-qualifiers]
                    [--no-repair-joins] [--all-schemas] [--concurrency N] [--resume OUT] --out OUT
    relmem eval judge OUT --out JUDGED.jsonl [LLM flags]
    relmem eval report OUT... [--judged JUDGED.jsonl ...] [--markdown] [--plots DIR]
"""
import json
import os
import sys

from .. import Error, llm as llms, outputs
from ..engines import local_sources, open_catalog
from ..agent import SWITCHES, Memories
from ..agent.commands import PIPELINE_SETTINGS, add_pipeline_arguments
from .compose import build_set, parse_counts
from .gold_simulator import NAME as SIMULATOR, GoldSimulator
from .items import load_set, write_set
from .judge import judge_run
from .report import markdown, plot, report
from .runner import CONDITIONS, make_pipeline, run_items


def register(commands):
    """Adds `eval` with its build, run and report subcommands to an argparse subparsers object."""
    parser = commands.add_parser("eval", help="evaluate the pipeline end to end (the paper's experiments)")
    subcommands = parser.add_subparsers(dest="eval_command", required=True)

    p = subcommands.add_parser("build", help="compose an evaluation set from Spider and zero-database questions")
    p.add_argument("--spider", required=True, metavar="DIR", help="Spider folder (dev.json, database/)")
    p.add_argument("--zero-db", required=True, metavar="DIR",
                   help="folder with squad2_sample/ and commonsenseqa/ (questions that need no database)")
    p.add_argument("--out", required=True, metavar="SET.jsonl")
    p.add_argument("--n", action="append", default=[], metavar="N|KIND=N",
                   help="items: a total (default 500: 20%% zero, 40%% single, 20%% double, 20%% multi) or "
                        "kind=count pairs, kinds zero, single, double, multi, value (repeatable or comma-separated)")
    p.add_argument("--value-cases", default=None, metavar="CASES.jsonl",
                   help="value cases of scripts/make_value_cases.py, for value=N questions (dev cases only)")
    p.add_argument("--questions", default="dev.json", metavar="FILE",
                   help="the Spider file in --spider that single, double and multi items are drawn from (default "
                        "dev.json; train_spider.json to choose settings without reading dev)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run_build)

    p = subcommands.add_parser("run", help="run the pipeline on every item of a set")
    p.add_argument("--set", required=True, metavar="SET.jsonl", dest="set_path")
    p.add_argument("--dbs", required=True, action="append", metavar="SOURCE",
                   help="a folder of SQLite databases, a SQLite file, or a server URL; repeat it to span several")
    p.add_argument("--memory", default=None, metavar="MEMDIR",
                   help="memories saved by `relmem index` (default: built now from --dbs)")
    p.add_argument("--llm", choices=("endpoint", SIMULATOR), default="endpoint",
                   help=f"endpoint: the LLM of the flags below (default: the local model); {SIMULATOR}: answers "
                        "from the items' gold, only with what the pipeline showed it (relmem's ceiling, not an "
                        "LLM's accuracy)")
    p.add_argument("--free", action="store_true",
                   help="free decoding: no output grammar even where the LLM enforces one (default: constrained)")
    p.add_argument("--condition", choices=list(CONDITIONS), default="relmem",
                   help="; ".join(f"{name}: {text}" for name, text in CONDITIONS.items()))
    llms.add_llm_arguments(p)
    p.add_argument("--disable", action="append", default=[], choices=sorted(set(SWITCHES) - {"conversation"}),
                   metavar="SWITCH", help="switch stages off (repeatable): " +
                                          ", ".join(sorted(set(SWITCHES) - {"conversation"})))
    add_pipeline_arguments(p)
    p.add_argument("--context", choices=("built", "full_ddl"), default="built",
                   help="the SQL prompts' schemas: built per question (default) or every table's DDL (ablation)")
    p.add_argument("--all-schemas", action="store_true",
                   help="no selection memory: every database's schema goes into planning")
    p.add_argument("--concurrency", type=int, default=1, help="questions in flight (default 1)")
    p.add_argument("--resume", default=None, metavar="OUT", help="keep the finished items of this earlier output")
    p.add_argument("--label", default=None, help="the run's name in reports (default: from the configuration)")
    p.add_argument("--full-trace", action="store_true", help="keep every prompt in the trace (large)")
    p.add_argument("--limit", type=int, default=None, help="only the first N items of the set")
    p.add_argument("--kind", action="append", default=[], choices=("zero", "single", "double", "multi", "value"),
                   help="only items of this kind (repeatable)")
    p.add_argument("--per-kind", type=int, default=None, metavar="N",
                   help="only the first N items of each kind (a run grows by resuming with a larger N)")
    p.add_argument("--out", required=True, metavar="OUT.jsonl")
    p.set_defaults(func=run_run)

    p = subcommands.add_parser("judge", help="judge a run's answers with an LLM (strict; the paper used GPT-4)")
    p.add_argument("output", metavar="OUT", help="the output of `relmem eval run`")
    p.add_argument("--out", required=True, metavar="JUDGED.jsonl",
                   help="judgements, one line per item; an existing file of the same judge is continued")
    llms.add_llm_arguments(p)
    p.set_defaults(func=run_judge)

    p = subcommands.add_parser("report", help="tables (and plots) from run outputs, side by side")
    p.add_argument("outputs", nargs="+", metavar="OUT")
    p.add_argument("--judged", action="append", default=[], metavar="JUDGED.jsonl",
                   help="judgements of `relmem eval judge` for these outputs (repeatable)")
    p.add_argument("--markdown", action="store_true", help="markdown tables instead of JSON")
    p.add_argument("--plots", default=None, metavar="DIR", help="also write bar plots (PNG) into DIR")
    p.set_defaults(func=run_report)


def run_build(args):
    outputs.refuse_overlap(args.out, {"--spider": args.spider, "--zero-db": args.zero_db,
                                      "--value-cases": args.value_cases}, "--out")
    outputs.refuse_existing(args.out, "--out")
    counts = parse_counts(args.n)
    items = build_set(args.spider, args.zero_db, counts, seed=args.seed, value_cases=args.value_cases,
                      questions=args.questions)
    write_set(items, args.out)
    made = {kind: sum(item.kind == kind for item in items) for kind in counts}
    print(f"wrote {len(items)} items to {args.out}: " + ", ".join(f"{n} {kind}" for kind, n in made.items()))
    return 0


def _label(args, model):
    if args.label:
        return args.label
    name = SIMULATOR if args.llm == SIMULATOR else llms.describe(model)
    changes = [args.condition] if args.condition != "relmem" else []
    changes += [f"no {switch}" for switch in sorted(args.disable)]
    changes += ["free decoding"] if args.free else []
    changes += ["all schemas"] if args.all_schemas else []
    changes += [f"top-k {args.top_k}"] if args.top_k != 5 else []
    changes += ["selected candidates"] if args.candidates == "selected" else []
    changes += ["candidates kept"] if args.keep_candidates else []
    changes += ["switch by selection"] if args.context_switch == "selection" else []
    changes += ["switch sees candidates"] if args.switch_view == "candidates" else []
    changes += ["full DDL"] if args.context == "full_ddl" else []
    changes += ["LLM decomposition"] if args.decompose == "llm" else []
    changes += ["parts planned apart"] if args.plan_parts else []
    changes += ["no qualifier repair"] if not args.repair_qualifiers else []
    changes += ["no join repair"] if not args.repair_joins else []
    changes += ["no count repair"] if not args.repair_counts else []
    return name + (f" ({', '.join(changes)})" if changes else "")


def _llm(args, items):
    if args.llm == SIMULATOR:
        return llms.CallableLLM(GoldSimulator(items), name=SIMULATOR)
    model = llms.from_args(args)
    if model is None:
        raise Error("no LLM: install the local model (make setup), pass --llm-gguf, or --llm-base-url and "
                    "--llm-model (or --llm gold-simulator)")
    return model


def run_run(args):
    if args.top_k < 1:
        raise Error("--top-k must be at least 1")
    resumed_elsewhere = args.resume and os.path.realpath(args.resume) != os.path.realpath(args.out)
    outputs.refuse_overlap(args.out, {"--set": args.set_path, "--dbs": local_sources(args.dbs), "--memory": args.memory,
                                      "--resume": args.resume if resumed_elsewhere else None}, "--out")
    items = select_items(load_set(args.set_path), args.kind, args.per_kind)[:args.limit]
    catalog = open_catalog(args.dbs)
    missing = sorted({db for item in items for db in item.databases} - set(catalog.databases))
    if missing:
        raise Error(f"the set needs databases that {', '.join(args.dbs)} lacks: {', '.join(missing[:5])}")
    if args.memory:
        memories = Memories.load(args.memory)
        memories.check_catalog(catalog)
    else:
        memories = Memories.build(catalog, progress=sys.stderr.isatty())
    model = _llm(args, items)
    settings = {name: getattr(args, name) for name in PIPELINE_SETTINGS + ("context",)}
    pipeline = make_pipeline(catalog, memories, model, args.disable, args.all_schemas, args.condition, items,
                             not args.free, **settings)
    run = {"label": _label(args, model), "llm": SIMULATOR if args.llm == SIMULATOR else llms.describe(model),
           "condition": args.condition, "constrained": not args.free, "disable": sorted(args.disable), **settings,
           "all_schemas": args.all_schemas, "set": args.set_path}
    summary = run_items(pipeline, items, args.out, run, args.concurrency, args.resume, args.full_trace,
                        progress=sys.stderr.isatty(), catalog=catalog, local=llms.local_model_of(model))
    print(json.dumps({"out": args.out, "label": run["label"], **summary}))
    return 0


def select_items(items, kinds=(), per_kind=None):
    """The items of `kinds` (all when empty), at most the first `per_kind` of each kind, in the set's order."""
    taken = {}
    chosen = []
    for item in items:
        if kinds and item.kind not in kinds:
            continue
        taken[item.kind] = taken.get(item.kind, 0) + 1
        if per_kind is None or taken[item.kind] <= per_kind:
            chosen.append(item)
    return chosen


def run_judge(args):
    outputs.refuse_overlap(args.out, {"OUT": args.output}, "--out")
    model = llms.from_args(args)
    if model is None:
        raise Error("no judge LLM: install the local model (make setup), pass --llm-gguf, or --llm-base-url and "
                    "--llm-model")
    summary = judge_run(model, args.output, args.out, llms.describe(model))
    print(json.dumps({"out": args.out, "judge": llms.describe(model), **summary}))
    return 0


def run_report(args):
    if args.plots:
        outputs.refuse_overlap(args.plots, {"OUT": args.outputs, "--judged": args.judged}, "--plots")
    result = report(args.outputs, args.judged)
    if args.plots:
        result["plots"] = plot(result, args.plots)
    print(markdown(result) if args.markdown else json.dumps(result, indent=1))
    return 0
