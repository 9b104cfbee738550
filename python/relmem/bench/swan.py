"""SWAN: beyond-database questions answered with LLM-filled virtual columns and LLM functions inside SQL.

    relmem bench swan --swan ../shared/data/swan [--out DIR] [--work DIR]
                      [--mode all|hqdl,lazy,udf,lazy-alone,blendsql] [--hqdl-fill all|touched]
                      [--llm oracle-filler [--fill-error RATE] | --llm model [LLM flags]]
                      [--results FILE] [--resume FILE] --json

Builds SWAN's curated databases (the originals minus columns_to_drop.json) into --out (default: a temporary
folder), the fill stores into --work (the same); the originals are only read, and an --out or --work that is,
holds or lies inside the SWAN folder is refused. Ground truth: each question's gold SQL on the original database.
- hqdl / lazy: each question's gold SQL over the curated database extended with virtual columns restoring the
  dropped ones. hqdl is HQDL's fill-everything: every row of every virtual column and relation is filled before the
  questions run (its tokens, calls and rows are reported as `upfront_fill` and included in the mode's and each
  database's totals); with --hqdl-fill touched, a virtual column is filled for every row of its table when a
  question first touches its table (for runs over a few questions). lazy fills only the virtual columns each query
  reads, in the rows it reads them. Each mode has its own fill store for the run, shared by its questions. A second
  lazy run over the same store measures reuse (its tokens should be 0). `foresight_floor` refills the cells the lazy
  run filled into a fresh store, each row's key sent once with every column any question needed there: what lazy
  filling would cost if it knew all the questions in advance (`floor_to_hqdl_tokens`), the least any lazy policy
  that fills rows by their keys can spend.
- lazy-alone (only when asked for): lazy with a fresh fill store per question: what each question needs by itself,
  and which questions read a virtual column in (nearly) every row of a table, so that no laziness can narrow them.
- udf: SWAN's BlendSQL hybrid queries translated into llm_map / llm_qa, on the curated database, with a fresh fill
  store per question; a dropped column a query reads by name (SQLite: no such column) becomes a virtual column
  (swan.missing_dropped_column). A question is "covered" when its query ran and the filler answered every function
  item it was asked (each input identified rows of a dropped column that agree on the value asked about).
- blendsql (only when asked for, with --llm model): SWAN's BlendSQL queries run by BlendSQL itself with the same
  GGUF model (relmem.bench.swan_blendsql); skipped when BlendSQL is not installed.
Execution accuracy: the result equals the gold result as a set of rows (floats rounded to 6 decimals), as SWAN
and BIRD compare them. Data factuality: see relmem.hybrid.factuality.

--llm oracle-filler answers every fill request from the original databases with --fill-error of its values wrong:
it measures relmem's machinery (batching, lazy filling, caching, scoring), not an LLM. Tokens are counted at about
4 characters per token. --llm model fills with a real LLM (relmem.bench.swan_runs: the local model by default,
each fill request constrained to its reply schema), counting the LLM's own tokens; the foresight floor and udf
coverage are the oracle's alone. Every mode reports prompt and completion tokens, calls and seconds per question;
a question whose fills came back out of form says so in its error (`fill_problems`) and the run goes on.
"""
import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from .. import execute_readonly, outputs
from .._relmem import Error
from ..hybrid import FillStore, factuality, session
from ..hybrid import swan as swan_data
from ..hybrid.blendsql import translate
from . import swan_blendsql, swan_runs

MODES = ("hqdl", "lazy", "udf")
ALONE = "lazy-alone"  # opt-in: lazy with a fresh fill store per question, what each question needs by itself
OPT_IN = (ALONE, swan_blendsql.MODE)
WHOLE_SHARE = 0.9  # a question that fills this share of a table's rows alone reads a virtual column in every row


def add_arguments(parser):
    parser.add_argument("--swan", required=True, help="the SWAN folder (databases/, beyond-database-questions/)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="new folder for the curated databases (default: temporary)")
    parser.add_argument("--dbs", default=None, help=argparse.SUPPRESS)  # refused with a pointer to --out
    parser.add_argument("--mode", default="all", help="all (hqdl, lazy and udf; the default), or one or more of hqdl, "
                        "lazy, udf, lazy-alone, blendsql (BlendSQL itself, with --llm model), comma-separated")
    parser.add_argument("--fill-error", type=float, default=0.0, help="share of filled values made wrong")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--databases", default=None, help="comma-separated subset of the four databases")
    parser.add_argument("--limit", type=int, default=None, help="at most this many questions per database")
    parser.add_argument("--questions", default=None,
                        help="comma-separated question ids (<database>/<n>, as in the report) to run alone")
    parser.add_argument("--batch-size", type=int, default=40, help="rows or inputs per fill request")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per query round")
    parser.add_argument("--work", default=None, metavar="DIR", help="folder for the fill stores (default: temporary)")
    parser.add_argument("--hqdl-fill", default="all", choices=("all", "touched"),
                        help="hqdl: fill every virtual column before the questions (all, the default), or each column "
                             "a question touches, for every row, when it first does (touched)")
    swan_runs.add_arguments(parser)


def _new_store(path):
    """A fill store in a file this run creates: the measurements start from an empty store."""
    outputs.refuse_existing(path, "--work")
    outputs.make_folder(path.parent, "--work")
    store = FillStore(str(path))
    outputs.record_created(path)
    return store


def _row_set(rows):
    return {tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in rows}


def _rows(result):
    return _row_set(result.rows)


def _same_rows(rows, gold_rows):
    return _row_set(rows) == _row_set(gold_rows)


def _tokens(stats):
    fills = stats["fills"]
    return {"tokens": fills["total_tokens"], "prompt_tokens": fills["prompt_tokens"],
            "completion_tokens": fills["completion_tokens"], "calls": fills["requests"], "rows_filled": fills["items"],
            "rounds": stats["rounds"]}


def _fill_problems(fills):
    """What went wrong in a question's fills ('' when nothing): unreadable or ill-typed answers, LLM failures."""
    if not fills["problems"]:
        return ""
    return (f"{fills['nulls']} of {fills['nulls'] + fills['values']} values left null, {fills['failed_requests']} "
            f"failed LLM calls; first: {fills['problems'][0][:200]}")


def _run_query(hybrid_session, sql, gold):
    """One question's row. An error inside (an LLM that fails or answers out of form) is the question's error; the
    run goes on."""
    started = time.perf_counter()
    try:
        result, stats = hybrid_session.execute(sql)
    except Error as error:
        return {"ok": False, "correct": False, "llm_failed": True, "error": f"failed: {error}", "tokens": 0,
                "prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "rows_filled": 0, "rounds": 0,
                "seconds": time.perf_counter() - started}
    row = _tokens(stats)
    row["seconds"] = time.perf_counter() - started
    row["ok"] = result.ok
    row["correct"] = bool(result.ok and gold.ok and _rows(result) == _rows(gold))
    problems = _fill_problems(stats["fills"])
    if problems:
        row["fill_problems"] = problems
        row["llm_failed"] = stats["fills"]["failed_requests"] > 0
    if not result.ok:
        row["error"] = f"{result.error_kind}: {result.error}"
    elif not row["correct"]:
        row["error"] = f"wrong result: {len(result.rows)} rows, gold {len(gold.rows)}"
    if problems and not row["correct"]:
        row["error"] += f" (fills: {problems})"
    row["by_kind"] = {kind: {"tokens": r["total_tokens"], "calls": r["requests"], "items": r["items"]}
                      for kind, r in stats["by_kind"].items()}
    row["filled"] = {}
    for request in stats["requests"]:
        row["filled"][request["target"]] = row["filled"].get(request["target"], 0) + request["items"]
    return row


def _upfront(hybrid_session, database, records):
    """HQDL's fill of every row of every virtual column of `database` (or what an earlier run recorded of it)."""
    question_id = f"{database}/{swan_runs.UPFRONT}"
    row = records.finished("hqdl", question_id)
    if row is None:
        started = time.perf_counter()
        filled = hybrid_session.fill_all()
        row = {"tokens": filled["total_tokens"], "prompt_tokens": filled["prompt_tokens"],
               "completion_tokens": filled["completion_tokens"], "calls": filled["requests"],
               "rows_filled": filled["items"], "seconds": time.perf_counter() - started}
        records.write("hqdl", question_id, row)
    return row


def _table_rows(curated, schema):
    """Rows per fill target of `schema`: a table's rows, a relation's owner rows."""
    with sqlite3.connect(f"file:{curated}?mode=ro", uri=True) as connection:
        def count(table):
            return connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
        sizes = {t["table"].lower(): count(t["table"]) for t in schema["tables"]}
        sizes.update({r["name"].lower(): count(r["owner"]["table"]) for r in schema["relations"]})
    return sizes


def _alone(prepared, questions, gold, oracle, work, args):
    """Each question with a fresh fill store: the rows it needs by itself, and whether it reads a virtual column in
    (nearly) every row of a table (ordinary predicates cannot narrow it)."""
    sizes = {db: _table_rows(curated, schema) for db, (curated, schema) in prepared.items()}
    rows = []
    for q in questions:
        curated, schema = prepared[q.database]
        store = _new_store(work / ALONE / f"{q.id.replace('/', '_')}.sqlite")
        row = _run_query(session(q.database, curated, schema, oracle, store, batch_size=args.batch_size,
                                 timeout=args.timeout, max_rows=100000), q.gold_sql, gold[q.id])
        row.update(database=q.database, question_id=q.id)
        row["whole_tables"] = sorted(  # a table one request covers costs the same filled whole: not counted
            target for target, items in row["filled"].items()
            if sizes[q.database].get(target.lower(), 0) > args.batch_size
            and items >= WHOLE_SHARE * sizes[q.database][target.lower()])
        rows.append(row)
    whole = [r for r in rows if r["whole_tables"]]
    tokens = sum(r["tokens"] for r in rows)
    out = _summary(rows)
    out["by_database"] = _per_database(rows)
    out["whole_table_questions"] = {r["question_id"]: r["whole_tables"] for r in whole}
    out["whole_table_token_share"] = sum(r["tokens"] for r in whole) / tokens if tokens else None
    return rows, out


def _needed_cells(store, database):
    """What a store holds for `database`: {(kind, target): {row key json: {column}}} (a relation's column is '')."""
    needed = {}
    for scope in store.scopes():
        kind, _, rest = scope.partition(":")
        name = rest.split("#", 1)[0]
        if kind not in ("column", "relation") or not name.startswith(database + "."):
            continue
        parts = name[len(database) + 1:].split(".", 1) if kind == "column" else [name[len(database) + 1:], ""]
        rows = needed.setdefault((kind, parts[0]), {})
        for key in store.values(scope):
            rows.setdefault(key, set()).add(parts[1])
    return needed


def _foresight_floor(prepared, lazy_store, oracle, work, args):
    """What lazy filling would cost if it knew every question in advance: the cells the lazy run filled, each row's
    key sent once with all the columns any question needed there, into a fresh store. No lazy policy that fills
    rows by their keys can spend less on these questions; HQDL's excess over it is what laziness can save."""
    by_database = {}
    for db, (curated, schema) in prepared.items():
        s = session(db, curated, schema, oracle, _new_store(work / "floor" / f"{db}.sqlite"),
                    batch_size=args.batch_size, timeout=args.timeout, max_rows=100000)
        total = {"tokens": 0, "calls": 0, "rows_filled": 0}
        for (kind, target), rows in _needed_cells(lazy_store, db).items():
            groups = {}
            for key, columns in rows.items():
                groups.setdefault(tuple(sorted(columns)), []).append(json.loads(key))
            for columns, keys in groups.items():
                report = s.prefill(target, keys, [c for c in columns if c])
                total["tokens"] += report["total_tokens"]
                total["calls"] += report["requests"]
                total["rows_filled"] += report["items"]
        by_database[db] = total
    out = {key: sum(d[key] for d in by_database.values()) for key in ("tokens", "calls", "rows_filled")}
    out["by_database"] = by_database
    return out


def _summary(rows):
    n = len(rows)
    out = {"questions": n,
           "execution_accuracy": sum(r["correct"] for r in rows) / n if n else None,
           "errors": sum(not r["ok"] for r in rows),
           "questions_with_fill_problems": sum(bool(r.get("fill_problems")) for r in rows)}
    for key in ("tokens", "prompt_tokens", "completion_tokens", "calls", "rows_filled"):
        out[key] = sum(r.get(key, 0) for r in rows)
    out["seconds_per_question"] = sum(r.get("seconds", 0.0) for r in rows) / n if n else None
    return out


def _per_database(rows):
    databases = sorted({r["database"] for r in rows})
    return {db: _summary([r for r in rows if r["database"] == db]) for db in databases}


def run(args):
    swan_dir = Path(args.swan)
    wanted = (args.databases.split(",") if args.databases else
              list(dict.fromkeys(q.split("/")[0] for q in args.questions.split(","))) if args.questions else
              list(swan_data.QUESTION_FILES))
    unknown = sorted(set(wanted) - set(swan_data.QUESTION_FILES))
    if unknown:
        raise Error(f"unknown SWAN database(s): {', '.join(unknown)}")
    modes = MODES if args.mode == "all" else tuple(m for m in MODES + OPT_IN if m in args.mode.split(","))
    if args.mode != "all" and len(modes) != len(set(args.mode.split(","))):
        raise Error(f"--mode: all, or one or more of {', '.join(MODES + OPT_IN)} (comma-separated), "
                    f"not {args.mode!r}")
    if args.dbs is not None:
        raise Error("--dbs names databases relmem reads; bench swan reads SWAN's originals from --swan and writes "
                    "its curated copies to --out, a folder apart from --swan")
    for name in ("--out", "--work", "--results"):
        if getattr(args, name[2:]):
            outputs.refuse_overlap(getattr(args, name[2:]), {"--swan": str(swan_dir)}, name)
    scratch = tempfile.TemporaryDirectory(prefix="relmem_swan_")
    dbs_dir = Path(args.out) if args.out else Path(scratch.name) / "curated"
    work = Path(outputs.make_folder(Path(args.work) if args.work else Path(scratch.name) / "work", "--work"))

    started = time.perf_counter()
    prepared, sources, notes = {}, [], {}
    for db in wanted:
        curated, dropped = swan_data.build_curated(swan_dir, db, dbs_dir, "--out")
        schema = swan_data.declarations(swan_dir, db, dropped)
        prepared[db] = (curated, schema)
        sources.append(swan_data.oracle_source(swan_dir, db, schema))
        notes[db] = dropped.notes
    gguf = swan_blendsql.model_path(args) if swan_blendsql.MODE in modes else None
    if any(mode != swan_blendsql.MODE for mode in modes):
        filler, described, oracle = swan_runs.filler(args, sources)
    else:  # BlendSQL loads the model in its own process
        filler, oracle = None, None
        described = swan_blendsql.describe_gguf(gguf)
    if oracle is None and ALONE in modes:
        raise Error("--mode lazy-alone measures the fill machinery: it runs with --llm oracle-filler only")
    chosen = set(args.questions.split(",")) if args.questions else None
    questions = [q for q in swan_data.load_questions(swan_dir, wanted)
                 if (args.limit is None or int(q.id.split("/")[1]) < args.limit) and (chosen is None or q.id in chosen)]
    if chosen and len(questions) != len(chosen):
        raise Error(f"--questions: no such question(s) among the databases run: "
                    f"{', '.join(sorted(chosen - {q.id for q in questions}))}")
    gold = {q.id: execute_readonly(str(swan_data.original_path(swan_dir, q.database)), q.gold_sql,
                                   timeout=args.timeout, max_rows=100000) for q in questions}

    report = {"benchmark": "swan", "llm": described, "fill_error": args.fill_error,
              "token_count": "about 4 characters per token" if oracle is not None else "the LLM's own counts",
              "hqdl_fill": args.hqdl_fill, "questions": len(questions),
              "gold_failures": [qid for qid, g in gold.items() if not g.ok], "dropped_notes": notes, "modes": {}}
    per_question = {q.id: {"database": q.database, "question": q.question} for q in questions}
    records = swan_runs.Records(args.results, args.resume)

    def answer(mode, q, hybrid_session, sql):
        row = records.finished(mode, q.id)
        if row is None:
            row = _run_query(hybrid_session, sql, gold[q.id])
            row.update(database=q.database)
            records.write(mode, q.id, row)
        return row

    for mode in modes:
        rows = []
        if mode in ("hqdl", "lazy"):
            store = _new_store(work / f"{mode}.sqlite")
            reused_before = records.reused
            fill_mode = "whole" if mode == "hqdl" and args.hqdl_fill == "touched" else "lazy"
            sessions = {db: session(db, curated, schema, filler, store, batch_size=args.batch_size,
                                    timeout=args.timeout, max_rows=100000, mode=fill_mode)
                        for db, (curated, schema) in prepared.items()}
            upfront = {db: _upfront(s, db, records) for db, s in sessions.items()} \
                if mode == "hqdl" and args.hqdl_fill == "all" else {}
            for q in questions:
                row = answer(mode, q, sessions[q.database], q.gold_sql)
                per_question[q.id][mode] = row
                rows.append(row)
            out = _summary(rows)
            out["by_database"] = _per_database(rows)
            resumed = records.reused > reused_before  # their fills are not in this run's store
            if upfront:  # HQDL fills every row of every virtual column before its questions run
                keys = ("tokens", "prompt_tokens", "completion_tokens", "calls", "rows_filled")
                for db, first in upfront.items():
                    out["by_database"][db]["upfront_fill"] = first
                    for key in keys:
                        out["by_database"][db][key] += first[key]
                out["upfront_fill"] = {key: sum(out["by_database"][db]["upfront_fill"][key] for db in upfront)
                                       for key in keys + ("seconds",)}
                for key in keys:
                    out[key] += out["upfront_fill"][key]
                if rows:
                    out["seconds_per_question_with_upfront"] = (out["seconds_per_question"]
                                                                + out["upfront_fill"]["seconds"] / len(rows))
            scores = {db: factuality.measure(store, db, swan_data.original_path(swan_dir, db),
                                             sessions[db].schema) for db in prepared}
            out["factuality"] = factuality.combine(list(scores.values()))
            out["factuality"]["by_database"] = scores
            if mode == "lazy" and not resumed:  # the same questions again over the same store: the store answers
                again = {db: session(db, curated, schema, filler, store, batch_size=args.batch_size,
                                     timeout=args.timeout, max_rows=100000) for db, (curated, schema) in prepared.items()}
                second = [_run_query(again[q.database], q.gold_sql, gold[q.id]) for q in questions]
                out["second_run"] = {"tokens": sum(r["tokens"] for r in second),
                                     "execution_accuracy": sum(r["correct"] for r in second) / len(second)
                                     if second else None}
                if oracle is not None:  # refilling with a real LLM would measure the LLM twice, not the floor
                    out["foresight_floor"] = _foresight_floor(prepared, store, oracle, work, args)
        elif mode == swan_blendsql.MODE:
            skipped = swan_blendsql.unavailable()
            if skipped:
                report["modes"][mode] = {"skipped": skipped}
                continue
            rows, extra = swan_blendsql.run(args, questions, prepared, gold, work, _same_rows, records)
            for q, row in zip(questions, rows):
                per_question[q.id][mode] = row
            out = dict(_summary(rows), **extra, by_database=_per_database(rows))
        elif mode == ALONE:
            rows, out = _alone(prepared, questions, gold, oracle, work, args)
            for row in rows:
                per_question[row.pop("question_id")][mode] = row
        else:
            covered_rows = []
            for q in questions:
                curated, schema = prepared[q.database]
                with sqlite3.connect(f"file:{curated}?mode=ro", uri=True) as connection:
                    try:
                        sql = translate(q.hybrid_sql, connection)
                    except Error as error:
                        sql, failure = None, str(error)
                row = records.finished(mode, q.id)
                if row is None and sql is None:
                    row = {"ok": False, "correct": False, "error": f"translation: {failure}", "tokens": 0,
                           "calls": 0, "rows_filled": 0, "rounds": 0}
                elif row is None:
                    store = _new_store(work / "udf" / f"{q.id.replace('/', '_')}.sqlite")
                    unanswered = oracle.unanswered_items if oracle is not None else None
                    declared = {"tables": [], "relations": [], "value_tables": []}
                    while True:  # a dropped column the query reads by name becomes a virtual column
                        s = session(q.database, curated, declared, filler, store, batch_size=args.batch_size,
                                    timeout=args.timeout, max_rows=100000)
                        row = _run_query(s, sql, gold[q.id])
                        declared = swan_data.missing_dropped_column(schema, row.get("error"), declared)
                        if row["ok"] or declared is None:
                            break
                    row["covered"] = row["ok"] and oracle is not None and oracle.unanswered_items == unanswered
                    row["sql"] = sql
                    row["database"] = q.database
                    records.write(mode, q.id, row)
                row.setdefault("covered", False)
                row.setdefault("database", q.database)
                per_question[q.id][mode] = row
                rows.append(row)
                if row["covered"]:
                    covered_rows.append(row)
            out = _summary(rows)
            out["by_database"] = _per_database(rows)
            out["translated_and_ran"] = sum(r["ok"] for r in rows) / len(rows) if rows else None
            out["covered_share"] = len(covered_rows) / len(rows) if rows else None
            out["execution_accuracy_covered"] = (sum(r["correct"] for r in covered_rows) / len(covered_rows)
                                                 if covered_rows else None)
        out["failures"] = {qid: q[mode].get("error", "") for qid, q in per_question.items()
                           if mode in q and not q[mode]["correct"]}
        report["modes"][mode] = out

    if "hqdl" in report["modes"] and "lazy" in report["modes"]:
        hqdl_tokens = report["modes"]["hqdl"]["tokens"]
        report["lazy_to_hqdl_tokens"] = report["modes"]["lazy"]["tokens"] / hqdl_tokens if hqdl_tokens else None
        report["lazy_to_hqdl_tokens_by_database"] = {
            db: lazy["tokens"] / hqdl["tokens"] if hqdl["tokens"] else None
            for db, lazy, hqdl in ((db, report["modes"]["lazy"]["by_database"][db],
                                    report["modes"]["hqdl"]["by_database"][db]) for db in prepared)}
    if "hqdl" in report["modes"] and "foresight_floor" in report["modes"].get("lazy", {}):
        hqdl_tokens = report["modes"]["hqdl"]["tokens"]
        floor = report["modes"]["lazy"]["foresight_floor"]
        report["floor_to_hqdl_tokens"] = floor["tokens"] / hqdl_tokens if hqdl_tokens else None
        report["floor_to_hqdl_tokens_by_database"] = {
            db: floor["by_database"][db]["tokens"] / report["modes"]["hqdl"]["by_database"][db]["tokens"]
            if report["modes"]["hqdl"]["by_database"][db]["tokens"] else None for db in prepared}
    report["per_question"] = per_question
    report["reused_from_resume"] = records.reused
    records.close()
    report["seconds"] = time.perf_counter() - started
    scratch.cleanup()
    return report
