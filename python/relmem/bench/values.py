"""Value memory on perturbed Spider literals: candidate recall, and execution accuracy before/after post-processing.

    relmem bench values --dbs ../shared/data/spider/database --cases value_cases.jsonl --fold heldout --json

Cases come from scripts/make_value_cases.py. recall@k: the gold value is among the value memory's top k
candidates for the perturbed value in its column (cases with a gold value). ex_before / ex_after: the perturbed
SQL / the post-processed perturbed SQL returns the gold SQL's result (as a multiset of rows; as a list when the
gold SQL has ORDER BY). ms_per_case: lookup + correction time per case; build_seconds (and build_cpu_seconds, all
threads): building the memory over every database under --dbs. --fold heldout keeps the cases of the databases
that scripts/fit_value_confidence.py never saw (the headline); by_fold reports both folds when the cases mix them.
"""
import collections
import json
import time

from ..engines import open_catalog
from ..encoders import DEFAULT_CHAIN, default_encoder_name, load_encoder
from ..values import CORRECTION_DEFAULTS, ValueMemory, confidence_model


def add_arguments(parser):
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--cases", required=True, help="JSONL cases from scripts/make_value_cases.py")
    parser.add_argument("--encoder", default=None, help=f"encoder spec (default: {DEFAULT_CHAIN})")
    parser.add_argument("--k", type=int, default=10, help="candidates per lookup")
    parser.add_argument("--min-confidence", type=float, default=None,
                        help="post-processing confidence threshold (default: the one fitted for the encoder)")
    parser.add_argument("--min-score", type=float, default=None, help="post-processing score floor (0.3)")
    parser.add_argument("--min-margin", type=float, default=None, help="post-processing margin floor (0.01)")
    parser.add_argument("--max-vectors-per-column", type=int, default=None)
    parser.add_argument("--split", default=None, help="only cases of this split (train/dev)")
    parser.add_argument("--fold", default=None, help="only cases of this fold (tune/heldout: the databases the "
                        "replacement confidence was fit on / never seen while fitting)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many cases")
    parser.add_argument("--memory", default=None, help="load a saved value memory instead of building one")


def load_cases(path, split=None, limit=None, fold=None):
    cases = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                case = json.loads(line)
                if (split is None or case.get("split") == split) and (fold is None or case.get("fold") == fold):
                    cases.append(case)
    return cases[:limit] if limit else cases


def _result_key(result, ordered):
    if not result.ok:
        return None
    rows = [tuple(repr(v) for v in row) for row in result.rows]
    return rows if ordered else collections.Counter(rows)


def same_result(catalog, db, sql, gold_key, ordered):
    return gold_key is not None and _result_key(catalog.execute(db, sql), ordered) == gold_key


def _summary(rows):
    with_gold = [r for r in rows if r["recall@1"] is not None]
    out = {"n": len(rows)}
    for key in ("recall@1", "recall@10"):
        out[key] = sum(r[key] for r in with_gold) / len(with_gold) if with_gold else None
    for key in ("ex_before", "ex_after"):
        out[key] = sum(r[key] for r in rows) / len(rows) if rows else None
    out["replaced"] = sum(r["replaced"] for r in rows) / len(rows) if rows else None
    # A server runs the gold SQL in its own dialect: where it fails, neither query can match it.
    runs = [r for r in rows if r["gold_runs"]]
    out["gold_runs"] = len(runs) / len(rows) if rows else None
    for key in ("ex_before", "ex_after"):
        out[key + "_where_gold_runs"] = sum(r[key] for r in runs) / len(runs) if runs else None
    return out


def evaluate(memory, catalog, cases, k=10, **thresholds):
    """Per-case rows: recall@1/@10 (None without a gold value), ex_before, ex_after, replaced, gold_runs, seconds.
    `thresholds`: min_confidence / min_score / min_margin for correct_values (its defaults when absent)."""
    thresholds = {key: value for key, value in thresholds.items() if value is not None}
    rows = []
    for case in cases:
        db = case["db_id"]
        ordered = "order by" in case["gold_sql"].lower()
        gold_key = _result_key(catalog.execute(db, case["gold_sql"]), ordered)
        start = time.perf_counter()
        found = memory.lookup(db, case["table"], case["column"], case["perturbed_value"], k=k)
        corrected = memory.correct_values(case["perturbed_sql"], db, catalog, **thresholds)
        seconds = time.perf_counter() - start
        values = [match.value for match in found]
        gold = case["gold_value"]
        rows.append({
            "category": case["category"],
            "split": case.get("split"),
            "fold": case.get("fold"),
            "recall@1": None if gold is None else gold in values[:1],
            "recall@10": None if gold is None else gold in values[:10],
            "ex_before": same_result(catalog, db, case["perturbed_sql"], gold_key, ordered),
            "ex_after": same_result(catalog, db, corrected.sql, gold_key, ordered),
            "replaced": bool(corrected.replacements),
            "gold_runs": gold_key is not None,
            "seconds": seconds,
        })
    return rows


def report(rows):
    out = _summary(rows)
    by_category = collections.defaultdict(list)
    for row in rows:
        by_category[row["category"]].append(row)
    out["by_category"] = {category: _summary(group) for category, group in sorted(by_category.items())}
    for field in ("split", "fold"):  # both split by database: the held-out fold was never seen while fitting
        groups = sorted({row[field] for row in rows if row.get(field)})
        if len(groups) > 1:
            out["by_" + field] = {group: _summary([r for r in rows if r.get(field) == group]) for group in groups}
    out["ms_per_case"] = 1e3 * sum(r["seconds"] for r in rows) / len(rows) if rows else None
    return out


def run(args):
    encoder = load_encoder(args.encoder or default_encoder_name())
    catalog = open_catalog(args.dbs)
    options = {}
    if args.max_vectors_per_column is not None:
        options["max_vectors_per_column"] = args.max_vectors_per_column
    start, cpu_start = time.perf_counter(), time.process_time()
    if args.memory:
        memory = ValueMemory.load(args.memory, encoder)
    else:
        memory = ValueMemory.build(catalog, encoder, progress=False, **options)
    build_seconds, build_cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start

    cases = [c for c in load_cases(args.cases, args.split, args.limit, args.fold) if c["db_id"] in memory]
    thresholds = {"min_confidence": args.min_confidence, "min_score": args.min_score, "min_margin": args.min_margin}
    rows = evaluate(memory, catalog, cases, k=args.k, **thresholds)
    defaults = {key: CORRECTION_DEFAULTS[key] for key in thresholds}
    defaults["min_confidence"] = confidence_model(memory.encoder.name)["threshold"]
    out = {"benchmark": "values", "encoder": encoder.name, "databases": len(memory)}
    out.update(report(rows))
    out.update({
        "build_seconds": build_seconds if not args.memory else None,
        # CPU time of all threads: on a shared machine, wall time also counts waiting for the cores.
        "build_cpu_seconds": build_cpu_seconds if not args.memory else None,
        "load_seconds": build_seconds if args.memory else None,
        "memory_bytes": memory.memory_bytes,
        "memory_usage": {name: getattr(memory.memory_usage, name) for name in (
            "string_bytes", "lexical_bytes", "vector_bytes", "total_bytes")},
        "options": memory.options,
        "thresholds": {**defaults, **{key: value for key, value in thresholds.items() if value is not None}},
    })
    return out
