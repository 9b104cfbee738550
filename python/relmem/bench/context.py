"""The planning prompt's schema context on questions with gold SQL: schema-linking recall, gold literals and tokens,
next to the full DDL of the same candidate databases.

    OMP_NUM_THREADS=1 relmem bench context --dbs ../shared/data/spider/database \
        --questions ../shared/data/spider/dev.json --json

Every database under --dbs gets its selection, value and row memories; each question of --questions (a JSON list of
{question, db_id, query}) gets its top --top-k databases from the selection memory and the context the
ContextBuilder makes of them.

gold tables: the base tables the gold SQL reads; gold columns: the columns of the gold tables whose names the gold
SQL uses as identifiers (a name two gold tables share counts for both). A table is in the context when its CREATE
TABLE is, a column when its table's CREATE TABLE shows it. Recalls are averaged over questions, under "given_gold_db"
over the questions whose gold database is among the candidates (what the context builder can reach) and under
"all" over every question. literals: the gold SQL's string literals (LIKE's % wildcards stripped); a question
counts when each of them appears verbatim in the context (as an example row value or a linked value, or in the
DDL). tokens: count_tokens() of the schema context (see relmem.agent.context_builder), and of the whole planning
prompt with it. ms_per_question: ContextBuilder.build alone (selection not included), one question at a time, in
wall-clock time; cpu_ms_per_question: the same in the process's CPU time, which a shared machine's other jobs do
not lengthen as much (time spent waiting for a core is not counted).

--tune-questions (e.g. Spider's train_spider.json, whose databases are not dev's) chooses the builder's table and
parent margins on other questions than those reported: each setting of the grid is measured on them (under
"tuning") and the one with the best mean of table and column recall given the gold database, among those whose median
context is at most --tune-max-ratio of the full DDL's, builds the contexts of --questions (held out).
"""
import itertools
import json
import re
import statistics
import sys
import time

from tqdm import tqdm

from .. import Catalog, Error, SelectionMemory
from .. import sql as sqltools
from ..agent.context_builder import ContextBuilder, count_tokens
from ..encoders import DEFAULT_CHAIN, load_encoder
from ..prompt_templates import render_prompt
from ..rows import RowMemory
from ..values import ValueMemory


def add_arguments(parser):
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--questions", required=True, help="JSON list of {question, db_id, query}")
    parser.add_argument("--top-k", type=int, default=5, help="candidate databases per question")
    parser.add_argument("--budget", type=int, default=2000, help="the context's token budget")
    parser.add_argument("--rows-per-table", type=int, default=1, help="example rows per kept table")
    parser.add_argument("--row-cap", type=int, default=100, help="rows the row memory keeps per table")
    parser.add_argument("--table-margin", type=float, default=None, help="ContextBuilder table_margin")
    parser.add_argument("--parent-margin", type=float, default=None, help="ContextBuilder parent_margin")
    parser.add_argument("--tune-questions", default=None,
                        help="JSON list of {question, db_id, query} to choose the margins on (see the module's text)")
    parser.add_argument("--tune-limit", type=int, default=400,
                        help="at most this many tuning questions, taken evenly across the file")
    parser.add_argument("--tune-max-ratio", type=float, default=0.48,
                        help="largest median share of the full-DDL prompt's tokens a tuned setting's prompt may use")
    parser.add_argument("--encoder", default=None, help=f"encoder spec (default: {DEFAULT_CHAIN})")
    parser.add_argument("--limit", type=int, default=None, help="at most this many questions")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")


def load_gold(path, limit=None):
    try:
        with open(path, encoding="utf-8") as f:
            records = json.load(f)
        questions = [(r["question"], r["db_id"], r["query"]) for r in records]
    except OSError as error:
        raise Error(f"cannot read {path}: {error.strerror}") from None
    except (ValueError, KeyError, TypeError) as error:
        raise Error(f"{path}: expected a JSON list of {{question, db_id, query}} ({error})") from None
    return questions[:limit] if limit else questions


def gold_schema(catalog, db, sql):
    """(gold tables, {(table, column)}, string literals) of a gold query, names as the schema spells them."""
    query = sqltools.parse(sql, catalog.schema(db))
    tables = {t.name.lower(): t for t in catalog.schema(db).tables}
    gold = [tables[name.lower()] for name in dict.fromkeys(query.tables) if name.lower() in tables]
    used = {word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\"[^\"]+\"|`[^`]+`", _without_strings(sql))}
    used = {word.strip('"`') for word in used}
    columns = {(t.name, c.name) for t in gold for c in t.columns if c.name.lower() in used}
    literals = [l.value.strip("%") for l in query.literals if l.kind == "string" and l.value.strip("%")]
    return [t.name for t in gold], columns, literals


def _without_strings(sql):
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def run(args):
    progress = not args.no_progress
    catalog = Catalog(args.dbs)
    questions = load_gold(args.questions, args.limit)
    encoder = load_encoder(args.encoder)
    timings = {}
    start = time.perf_counter()
    selection = SelectionMemory.build(catalog, encoder, progress=progress)
    timings["selection_build_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    values = ValueMemory.build(catalog, encoder, progress=progress)
    timings["values_build_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    rows = RowMemory.build(catalog, rows_per_table=args.row_cap, progress=progress)
    timings["rows_build_seconds"] = time.perf_counter() - start
    options = {"token_budget": args.budget, "rows_per_table": args.rows_per_table}
    for name in ("table_margin", "parent_margin"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    full = ContextBuilder(catalog, selection, mode="full_ddl")
    tuning = None
    if args.tune_questions:
        tuning = tune(catalog, selection, values, rows, full, evenly(load_gold(args.tune_questions), args.tune_limit),
                      args.top_k, options, args.tune_max_ratio, progress)
        options.update(tuning["chosen"])
    built = ContextBuilder(catalog, selection, values=values, rows=rows, **options)

    report = {"benchmark": "context", "encoder": encoder.name, "databases": len(catalog.databases),
              "questions": len(questions), "top_k": args.top_k, "budget": args.budget,
              "rows_per_table": args.rows_per_table, "table_margin": built.table_margin,
              "parent_margin": built.parent_margin, "min_tables": built.min_tables,
              "row_memory": {"rows_per_table_cap": args.row_cap, "rows": sum(len(i) for i in rows.indexes.values()),
                             "encoder": rows.encoder.name, "memory_bytes": rows.memory_bytes},
              "tokenizer": "count_tokens: runs of <= 8 letters, <= 3 digits, single other characters",
              **{k: round(v, 3) for k, v in timings.items()}}
    if tuning is not None:
        report["tuning"] = {"questions": args.tune_questions, **tuning}
    report.update(evaluate(catalog, selection, built, full, questions, args.top_k, progress))
    return report


TUNING_GRID = {"table_margin": (0.25, 0.35, 0.45), "parent_margin": (0.5, 0.6, 0.7)}


def tune(catalog, selection, values, rows, full, questions, top_k, options, max_ratio, progress=False):
    """{"evaluated", "grid": [settings with their figures], "chosen": settings} over the tuning questions (see the
    module's text); the margins given on the command line are not tuned."""
    names = [name for name in TUNING_GRID if name not in options]
    candidates = select_candidates(selection, questions, top_k)
    grid, best = [], None
    for values_of_grid in itertools.product(*(TUNING_GRID[name] for name in names)):
        settings = dict(zip(names, values_of_grid))
        built = ContextBuilder(catalog, selection, values=values, rows=rows, **options, **settings)
        figures = evaluate(catalog, selection, built, full, questions, top_k, progress, candidates)
        given = figures["built"]["given_gold_db"]
        recall = (given["table_recall"] + given["column_recall"]) / 2
        ratio = figures["tokens"]["prompt_median_ratio"]
        grid.append({**settings, "table_recall": given["table_recall"], "column_recall": given["column_recall"],
                     "median_ratio": figures["tokens"]["median_ratio"], "prompt_median_ratio": ratio,
                     "literals": figures["literals"]["questions_all_present"]})
        if ratio <= max_ratio and (best is None or (recall, -ratio) > best[0]):
            best = (recall, -ratio), settings
    if best is None:
        raise Error(f"no setting of the tuning grid keeps the median prompt within {max_ratio} of the full DDL's")
    return {"evaluated": figures["evaluated"], "max_ratio": max_ratio, "grid": grid, "chosen": best[1]}


def evenly(questions, limit):
    """At most `limit` questions taken evenly across the list (Spider's files are grouped by database)."""
    if len(questions) <= limit:
        return list(questions)
    return [questions[i * len(questions) // limit] for i in range(limit)]


def select_candidates(selection, questions, top_k):
    """The top_k DatabaseMatch of each question (names and scores)."""
    return [selection.select(question, top_k) for question, _, _ in questions]


def evaluate(catalog, selection, built, full, questions, top_k, progress=False, candidates=None):
    """The metrics of the module's text over [(question, db, gold sql)]; `candidates`: select_candidates() of them
    when already known."""
    if candidates is None:
        candidates = select_candidates(selection, questions, top_k)
    built_recall = {"tables": [], "columns": [], "tables_given": [], "columns_given": []}
    full_recall = {"tables": [], "columns": []}
    literal_hits, literal_questions, literal_count, literal_found = 0, 0, 0, 0
    tokens = {"built": [], "full_ddl": [], "built_prompt": [], "full_ddl_prompt": []}
    milliseconds, cpu_milliseconds = [], []
    skipped = in_candidates = 0
    for (question, db, sql), matches in tqdm(zip(questions, candidates), total=len(questions), desc="context",
                                             disable=not progress, file=sys.stderr):
        try:
            gold_tables, gold_columns, literals = gold_schema(catalog, db, sql)
        except Error:
            skipped += 1
            continue
        names, scores = [m.database for m in matches], [m.score for m in matches]
        in_candidates += db in names
        start, cpu_start = time.perf_counter(), time.process_time()
        context = built.build(question, names, scores)
        milliseconds.append(1000 * (time.perf_counter() - start))
        cpu_milliseconds.append(1000 * (time.process_time() - cpu_start))
        baseline = full.build(question, names)
        for kind, ctx in (("built", context), ("full_ddl", baseline)):
            tokens[kind].append(ctx.tokens)
            tokens[kind + "_prompt"].append(sum(count_tokens(m["content"]) for m in
                                                render_prompt("plan", schemas=ctx.text, question=question)))
        for recall, ctx in ((built_recall, context), (full_recall, baseline)):
            tables_share, columns_share = schema_recall(ctx.database(db), gold_tables, gold_columns)
            recall["tables"].append(tables_share)
            recall["columns"].append(columns_share)
            if recall is built_recall and db in names:
                recall["tables_given"].append(tables_share)
                recall["columns_given"].append(columns_share)
        if literals:
            literal_questions += 1
            present = [literal in context.text for literal in literals]
            literal_hits += all(present)
            literal_count += len(present)
            literal_found += sum(present)

    def mean(values):
        return round(sum(values) / len(values), 4) if values else None

    def share(part, whole):
        return round(part / whole, 4) if whole else None

    def spread(values):
        ordered = sorted(values)
        return {"median": statistics.median(ordered), "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]}

    token_report = {kind: spread(values) for kind, values in tokens.items() if values}
    if tokens["built"]:
        token_report["median_ratio"] = round(token_report["built"]["median"] / token_report["full_ddl"]["median"], 4)
        token_report["prompt_median_ratio"] = round(token_report["built_prompt"]["median"] /
                                                    token_report["full_ddl_prompt"]["median"], 4)
    return {"evaluated": len(milliseconds), "skipped_unparsed": skipped,
            "gold_db_in_candidates": share(in_candidates, len(milliseconds)),
            "built": {"given_gold_db": {"table_recall": mean(built_recall["tables_given"]),
                                        "column_recall": mean(built_recall["columns_given"])},
                      "all": {"table_recall": mean(built_recall["tables"]),
                              "column_recall": mean(built_recall["columns"])}},
            "full_ddl": {"all": {"table_recall": mean(full_recall["tables"]),
                                 "column_recall": mean(full_recall["columns"])}},
            "literals": {"questions_with_literals": literal_questions,
                         "questions_all_present": share(literal_hits, literal_questions),
                         "literals": literal_count, "literals_present": share(literal_found, literal_count)},
            "tokens": token_report,
            "ms_per_question": timing(milliseconds), "cpu_ms_per_question": timing(cpu_milliseconds)}


def timing(milliseconds):
    """{mean, median, p95} of per-question times (None each when there are none)."""
    if not milliseconds:
        return {"mean": None, "median": None, "p95": None}
    ordered = sorted(milliseconds)
    return {"mean": round(statistics.mean(ordered), 3), "median": round(statistics.median(ordered), 3),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3)}


def schema_recall(database_context, gold_tables, gold_columns):
    """(share of gold tables, share of gold columns) the database's context shows; (0, 0) when it is absent."""
    if database_context is None:
        return 0.0, 0.0
    shown = {t.name: set(t.columns) for t in database_context.tables}
    tables = sum(t in shown for t in gold_tables) / len(gold_tables) if gold_tables else 1.0
    columns = (sum(c in shown.get(t, ()) for t, c in gold_columns) / len(gold_columns)) if gold_columns else 1.0
    return tables, columns
