"""The `relmem index` and `relmem ask` commands.

    relmem index --dbs DIR --out MEMDIR [--encoder SPEC] [--examples FILE] [--descriptions FILE]
    relmem ask --dbs DIR [--memory MEMDIR] [--llm-base-url URL --llm-model M ...] [--json] [--verbose] "question"

The CLI registers them with add_index_arguments/run_index and add_ask_arguments/run_ask (or register()).
"""
import json
import sys

from .. import Error, outputs
from ..encoders import DEFAULT_CHAIN
from ..engines import local_sources, open_catalog
from ..examples import load_records
from ..llm import add_llm_arguments, from_args
from ..typed_json import json_default
from .config import CANDIDATES, CONTEXT_SWITCHES, DECOMPOSERS, SWITCH_VIEWS, SWITCHES
from .memories import Memories
from .pipeline import Pipeline
from .tables import format_table
from .trace import format_trace


def _add_collection_arguments(parser):
    parser.add_argument("--dbs", required=True, action="append", metavar="SOURCE",
                        help="a folder of SQLite databases, a SQLite file, or a server URL (postgresql://..., "
                             "mysql://...); repeat it to span several")
    parser.add_argument("--encoder", default=None, metavar="SPEC",
                        help=f"encoder spec for building memories (default: {DEFAULT_CHAIN})")
    parser.add_argument("--examples", default=None, metavar="FILE",
                        help="example memory records: JSON list or JSON lines of {question, sql, database} or "
                             "{term, definition}")
    parser.add_argument("--descriptions", default=None, metavar="FILE",
                        help="JSON object {database: description} used in cards and prompts")


def add_index_arguments(parser):
    _add_collection_arguments(parser)
    parser.add_argument("--out", required=True, metavar="MEMDIR", help="folder the memories are saved into")
    parser.add_argument("--strict", action="store_true",
                        help="fail (exit 1, nothing saved) when any database of the folder had to be skipped")
    return parser


# The PipelineConfig fields that add_pipeline_arguments() sets, by their argparse names.
PIPELINE_SETTINGS = ("top_k", "candidates", "keep_candidates", "context_switch", "switch_view", "decompose",
                     "plan_parts", "repair_qualifiers", "repair_joins", "repair_counts")


def add_pipeline_arguments(parser):
    """The pipeline settings that `relmem ask` and `relmem eval run` share (PipelineConfig's fields)."""
    parser.add_argument("--top-k", type=int, default=5, help="databases whose schemas go into planning (default 5)")
    parser.add_argument("--candidates", choices=CANDIDATES, default="top_k",
                        help="which of the top K go into planning: all (top_k, default) or those of the selection "
                             "memory's calibrated set, at least the first (selected)")
    parser.add_argument("--keep-candidates", action="store_true",
                        help="the plan must use the candidates it is given: no \"No relevant database\" (selection "
                             "without the LLM's refinement)")
    parser.add_argument("--context-switch", choices=CONTEXT_SWITCHES, default="llm",
                        help="who decides whether a question needs the databases: the LLM (default) or the "
                             "selection memory's scores (selection: no LLM call)")
    parser.add_argument("--switch-view", choices=SWITCH_VIEWS, default="collection",
                        help="the databases the LLM context switch is shown: the collection's overview (default) or "
                             "the selection memory's top K for the question (candidates)")
    parser.add_argument("--decompose", choices=DECOMPOSERS, default="rules",
                        help="who splits a question into parts for database selection: the selection memory's "
                             "rules (default) or the LLM (the decompose stage)")
    parser.add_argument("--plan-parts", action="store_true",
                        help="plan a question of parts set apart (Q1: ...; Q2: ..., a list, or the LLM's "
                             "decomposition) part by part, one plan call each (default: one plan for the question)")
    parser.add_argument("--no-repair-qualifiers", dest="repair_qualifiers", action="store_false",
                        help="run the planned SQL as written: no repair of a column qualified by a FROM item that "
                             "lacks it (default: moved to the one other FROM item of its SELECT that has it)")
    parser.add_argument("--no-repair-joins", dest="repair_joins", action="store_false",
                        help="run the planned SQL as written: no join of a table missing from FROM (default: joined "
                             "on its foreign key when it is the one table with the column that a key links)")
    parser.add_argument("--no-repair-counts", dest="repair_counts", action="store_false",
                        help="run the planned SQL as written: no join for a count of one row per row (default: the "
                             "one table whose foreign key references the counted table joined, grouped by the key)")


def add_ask_arguments(parser):
    _add_collection_arguments(parser)
    parser.add_argument("--memory", default=None, metavar="MEMDIR",
                        help="memories saved by `relmem index` (default: built now from --dbs)")
    add_llm_arguments(parser)
    add_pipeline_arguments(parser)
    parser.add_argument("--disable", action="append", default=[], choices=sorted(SWITCHES), metavar="SWITCH",
                        help="switch stages off (repeatable): " + ", ".join(sorted(SWITCHES)))
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: answer, results, trace")
    parser.add_argument("--verbose", action="store_true", help="also print the readable trace")
    parser.add_argument("question")
    return parser


def register(commands):
    """Adds `index` and `ask` to an argparse subparsers object."""
    p = commands.add_parser("index", help="build and save every memory of a database folder")
    add_index_arguments(p)
    p.set_defaults(func=run_index)
    p = commands.add_parser("ask", help="answer a question from a database folder")
    add_ask_arguments(p)
    p.set_defaults(func=run_ask)


def _open_catalog(sources):
    catalog = open_catalog(sources)
    for path, reason in catalog.skipped:
        print(f"skipped {path}: {reason}", file=sys.stderr)
    if not len(catalog):
        raise Error(f"no databases found in {', '.join(sources)}")
    return catalog


def _descriptions(path):
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            descriptions = json.load(f)
    except OSError as error:
        raise Error(f"cannot read descriptions {path}: {error.strerror}") from None
    except ValueError as error:
        raise Error(f"descriptions {path} is not valid JSON: {error}") from None
    if not isinstance(descriptions, dict) or not all(isinstance(v, str) for v in descriptions.values()):
        raise Error(f"descriptions {path} must be a JSON object {{database: description}}")
    return descriptions


def _build(args, catalog, progress):
    return Memories.build(catalog, encoder=args.encoder, descriptions=_descriptions(args.descriptions),
                          examples=load_records(args.examples) if args.examples else (), progress=progress)


def run_index(args):
    outputs.refuse_overlap(args.out, {"--dbs": local_sources(args.dbs), "--examples": args.examples,
                                      "--descriptions": args.descriptions}, "--out")
    catalog = _open_catalog(args.dbs)
    if args.strict and catalog.skipped:
        print(f"relmem index: {len(catalog.skipped)} database(s) skipped (--strict); nothing saved", file=sys.stderr)
        return 1
    memories = _build(args, catalog, progress=True)
    memories.save(args.out)
    print(f"saved memories of {len(catalog)} databases to {args.out} (encoder {memories.encoder.name}, "
          f"{len(memories.examples)} examples)")
    return 0


def run_ask(args):
    catalog = _open_catalog(args.dbs)
    if args.memory:
        memories = Memories.load(args.memory)
        memories.check_catalog(catalog)
        if args.descriptions:
            memories.descriptions.update(_descriptions(args.descriptions))
        if args.examples:
            memories.examples.add(load_records(args.examples))
    else:
        memories = _build(args, catalog, progress=sys.stderr.isatty())
    llm = from_args(args)
    pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, memories.examples,
                                descriptions=memories.descriptions,
                                config={name: getattr(args, name) for name in PIPELINE_SETTINGS},
                                disable=args.disable, rows=memories.rows)
    state = pipeline.ask(args.question)
    if args.json:
        print(json.dumps(state.to_dict(), default=json_default, ensure_ascii=False))
    else:
        _print_readable(state, args.verbose)
    return 1 if state.answer.startswith("could not answer") else 0


def _print_readable(state, verbose):
    print(state.answer)
    for result in state.results():
        print(f"\n[{result['database']}] {result['sql']}")
        if result["error"]:
            print(f"error: {result['error']}")
        else:
            print(format_table(result["columns"], result["rows"]))
    if verbose:
        tokens = state.trace.tokens()
        print(f"\ntrace ({tokens['calls']} LLM calls, {tokens['total_tokens']} tokens):")
        print(format_trace(state.trace.records))
