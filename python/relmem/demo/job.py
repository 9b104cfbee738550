"""The main demo job: build the demo collection and its memories (as `relmem index` does), route example questions
to databases and link their words to stored values with the pipeline's LLM-free stages (what `relmem ask` runs
without an LLM) and answer them with the full pipeline and the LLM: an endpoint when one is configured, else the
local model `make setup` installs."""
import json
import os
import sys
import time

from .. import Catalog, Error, SelectionMemory, outputs
from ..agent.config import measured_settings
from ..agent.memories import Memories
from ..agent.pipeline import Pipeline
from ..agent.tables import format_table
from ..encoders import DEFAULT_CHAIN, load_encoder, relmem_home
from ..llm import MeteredLLM, add_llm_arguments, describe, from_args, from_config
from .collection import DESCRIPTIONS, build_collection

# (question, the database that answers it, or None when no database does)
QUESTIONS = [
    ("What is the average rating of Italian restaurants in Los Angeles?", "restaurants"),
    ("Which hospitals in San Francisco have a trauma center?", "hospitals"),
    ("What is the population of Seattle and when was it founded?", "world_cities"),
    ("How many female singers are older than 30?", "singers"),
    ("Which employees in the research and development department earn more than 100000?", "employees"),
    ("List flights from Los Angeles to New York cheaper than 300 dollars.", "flights"),
    ("How many computer science students have a GPA above 3.5?", "university"),
    ("Who wrote the play Hamlet?", None),
]
TOP_K = 3
CONFIGURED = "configured"  # run(llm=CONFIGURED): the configured endpoint, else the local model, if any
SOURCE_FILE = "demo-source.json"
NONE_EXPECTED = "no database answers this question: no database's probability reaches 0.5, so none is selected"
NO_LLM = ("no LLM: the local model is not installed (`make setup` installs it) and no endpoint is configured (set "
          "RELMEM_LLM_BASE_URL and RELMEM_LLM_MODEL, or pass --llm-base-url and --llm-model): shown are the LLM-free "
          "stages, database selection and value linking")


def default_folder():
    return os.path.join(relmem_home(), "demo")


def default_memory_folder():
    return os.path.join(relmem_home(), "demo-memory")


def add_arguments(parser):
    """The flags of `relmem demo`."""
    parser.add_argument("--dir", default=None, help="where the demo databases are built (default $RELMEM_HOME/demo)")
    parser.add_argument("--encoder", default=None, help=f"encoder spec (default: {DEFAULT_CHAIN})")
    parser.add_argument("--memory", default=None, metavar="MEMDIR",
                        help="where the demo memories are kept (default $RELMEM_HOME/demo-memory); they are reused "
                             "while the databases, encoder and descriptions are unchanged")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the memories even when they are up to date")
    add_llm_arguments(parser)
    return parser


def run_args(args):
    """`relmem demo` with the flags of add_arguments()."""
    run(folder=args.dir, encoder_name=args.encoder, memory_folder=args.memory, llm=from_args(args),
        rebuild=args.rebuild)
    return 0


def _source(catalog, folder, encoder):
    """What the memories are built from; saved memories are reused while it is unchanged."""
    files = {}
    for db in catalog.databases:
        stat = os.stat(catalog.path(db))
        files[db] = [stat.st_size, stat.st_mtime_ns]
    untrained = SelectionMemory.untrained_calibration(encoder.name)
    return {"folder": os.path.abspath(folder), "encoder": encoder.name, "descriptions": DESCRIPTIONS,
            "databases": files, "calibration": [untrained.scale, untrained.lead, untrained.bias]}


def _saved_source(memory_folder):
    try:
        with open(os.path.join(memory_folder, SOURCE_FILE), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def open_memories(catalog, folder, encoder, memory_folder, rebuild=False, out=print):
    """The demo memories: loaded from `memory_folder` when they were built from the same databases, encoder and
    descriptions, else built the way `relmem index` builds them and saved there. Returns (memories, "loaded" or
    "built")."""
    source = _source(catalog, folder, encoder)
    source_path = os.path.join(memory_folder, SOURCE_FILE)
    if not rebuild and _saved_source(memory_folder) == source:
        try:
            return Memories.load(memory_folder, encoder), "loaded"
        except Error as error:
            out(f"the saved memories in {memory_folder} could not be loaded ({error}); rebuilding them")
    memories = Memories.build(catalog, encoder=encoder, descriptions=DESCRIPTIONS, progress=sys.stderr.isatty())
    if os.path.exists(source_path):
        os.remove(source_path)  # a save cut short must never look up to date
    memories.save(memory_folder)
    outputs.write_file(source_path, json.dumps(source, indent=1), "--memory")
    return memories, "built"


def _resolve_llm(llm):
    return from_config() if isinstance(llm, str) and llm == CONFIGURED else llm


def _links_text(links):
    return ", ".join(f'"{link.span}" = {link.table}.{link.column} {link.value!r} ({link.score:.2f})'
                     for link in links)


def _print_answer(state, out):
    answer = str(state.answer)
    if "\n" in answer:  # a table of rows: below the label, indented like the results
        out("  answer:\n    " + answer.replace("\n", "\n    "))
    else:
        out(f"  answer: {answer}")
    for result in state.results():
        out(f"  [{result['database']}] {result['sql']}")
        if result["error"]:
            out(f"  error: {result['error']}")
        else:
            out("    " + format_table(result["columns"], result["rows"], max_rows=5).replace("\n", "\n    "))


def run(folder=None, encoder_name=None, out=print, memory_folder=None, llm=CONFIGURED, questions=QUESTIONS,
        rebuild=False):
    """Runs the demo and returns its summary. `llm`: an LLM, None for none, or CONFIGURED (the one the environment
    configures). `questions`: (question, expected database or None) pairs."""
    folder = folder or default_folder()
    memory_folder = memory_folder or default_memory_folder()
    outputs.refuse_overlap(memory_folder, {"--dir": folder}, "--memory")
    build_collection(folder)
    catalog = Catalog(folder)
    encoder = load_encoder(encoder_name)
    llm = _resolve_llm(llm)
    started = time.perf_counter()
    memories, how = open_memories(catalog, folder, encoder, memory_folder, rebuild=rebuild, out=out)
    out(f"relmem demo: {len(catalog)} databases in {folder}, encoder {encoder.name}; memories {how} "
        f"{'from' if how == 'loaded' else 'into'} {memory_folder} in {time.perf_counter() - started:.1f} s")
    llm_free = Pipeline.default(catalog, None, memories.selection, memories.values, config={"top_k": TOP_K})
    pipeline = None
    if llm is not None:
        out(f"LLM: {describe(llm)}")
        llm = MeteredLLM(llm)
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, memories.examples,
                                    descriptions=memories.descriptions, disable={"conversation"},
                                    rows=memories.rows, config=measured_settings(encoder.name))

    summary = {"encoder": encoder.name, "memory": how, "hits": 0, "set_hits": 0,
               "answerable": sum(1 for _, expected in questions if expected), "llm": pipeline is not None,
               "rankings": [], "selected": [], "links": [], "answers": [], "seconds": [], "tokens": []}
    for question, expected in questions:
        out(f"\nQ: {question}")
        found = llm_free.ask(question)
        ranking = found.candidates
        for rank, candidate in enumerate(ranking, start=1):
            out(f"  {rank}. {candidate.database:<14} score {candidate.score:.3f}  "
                f"probability {candidate.probability:.3f}")
        selected = [match.database for match in memories.selection.select_set(question, at_least_one=False)]
        out(f"  selected: {', '.join(selected) or 'none'}")
        for db, db_links in found.question_values.items():
            out(f"  values in {db}: {_links_text(db_links)}")
        if expected is None:
            out(f"  expected: {NONE_EXPECTED}")
        else:
            summary["hits"] += ranking[0].database == expected
            summary["set_hits"] += expected in selected
        summary["rankings"].append([(c.database, c.score, c.probability) for c in ranking])
        summary["selected"].append(selected)
        summary["links"].append({db: [(l.span, l.value, l.table, l.column, l.score) for l in db_links]
                                 for db, db_links in found.question_values.items()})
        if pipeline is not None:
            llm.ledger.reset()
            asked = time.perf_counter()
            state = pipeline.ask(question)
            seconds = time.perf_counter() - asked
            total = llm.ledger.total()
            _print_answer(state, out)
            out(f"  {seconds:.1f} s, {total.calls} LLM calls, {total.prompt_tokens} prompt + "
                f"{total.completion_tokens} completion tokens")
            summary["answers"].append(state.answer)
            summary["seconds"].append(seconds)
            summary["tokens"].append(total.total_tokens)

    out(f"\nfirst-ranked database correct for {summary['hits']} of {summary['answerable']} database questions; "
        f"the selected set holds it for {summary['set_hits']}")
    if pipeline is None:
        out(NO_LLM)
    else:
        answered = sum(1 for answer in summary["answers"] if not answer.startswith("could not answer"))
        out(f"the LLM pipeline answered {answered} of {len(questions)} questions in {sum(summary['seconds']):.0f} s "
            f"({sum(summary['tokens'])} tokens)")
    return summary
