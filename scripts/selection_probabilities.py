"""Whether the selection memory's probabilities read as probabilities, for a calibration objective.

    python scripts/selection_probabilities.py --spider ../shared/data/spider --zero-db ../shared/data/zero_db \
        --objective likelihood [--lead] [--fit-no-database [--gate] --exclude docs/eval/llm/set.jsonl] [--encoder SPEC]

Builds the untrained memory (on --encoder, by default the default encoder) on every Spider database and calibrates
it on train_spider.json as `relmem bench selection` does: a fine-tuned encoder on its held-out databases' questions
only; with --lead, on each candidate's score and its lead over the best other candidate; with --fit-no-database,
also on the CommonsenseQA dev questions after the first --count, minus those an --exclude set holds, as questions no
database answers (with --gate, they fit the gate of a gated calibration, SelectionMemory.calibrate(gate=True)).
Then it reports on dev: the share of questions whose database gets p >= 0.8 (also apart for
questions clear by the schema, where no other database has every table and column the gold SQL names, and the rest),
the share whose best wrong database gets p < 0.5, the top database's expected calibration error (10 bins of its
probability, against how often it is right), recall@1 and set F1 (select_set, at least the best database); for
the first --count questions of SQuAD 2.0's sample and of CommonsenseQA's dev split (questions no database answers),
the share whose best database gets p < 0.5, which is the share select_set(at_least_one=False) leaves empty; and,
with the fitted calibration, the demo collection's questions. Nothing is fitted on dev, on SQuAD or on the measured
CommonsenseQA questions.
"""
import argparse
import json
import os
import tempfile

from relmem import Catalog
from relmem.agent import Memories
from relmem.bench import selection as bench
from relmem.demo import collection as demo_collection
from relmem.demo.job import QUESTIONS as DEMO_QUESTIONS
from relmem.encoders import default_encoder_name, load_encoder
from relmem.engines import open_catalog
from relmem.eval.compose import load_set

HAMLET = "Who wrote the play Hamlet?"


def commonsense_entries(zero_db):
    with open(os.path.join(zero_db, "commonsenseqa", "dev_rand_split.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def no_database_questions(zero_db, count):
    with open(os.path.join(zero_db, "squad2_sample", "queries.json")) as f:
        squad = [q["question"] for q in json.load(f)["queries"]][:count]
    commonsense = [entry["question"] for entry in commonsense_entries(zero_db)][:count]
    return {"squad": squad, "commonsenseqa": commonsense}


def fitting_no_database_questions(zero_db, count, exclude):
    """CommonsenseQA dev questions after the first `count` (those are measured), minus any an --exclude set holds."""
    held_out = {item.source for path in exclude for item in load_set(path)}
    return [entry["question"] for entry in commonsense_entries(zero_db)[count:]
            if f"commonsenseqa/{entry['id']}" not in held_out]


def schema_names(catalog, db):
    """{table: {column, ...}} of a database, lower-cased."""
    return {t.name.lower(): {c.name.lower() for c in t.columns} for t in catalog.schema(db).tables}


def clear_questions(entries, catalog):
    """For each Spider entry, whether its question is clear by the schema: no other database of the collection has
    every table its gold SQL reads and every column it names (names compared lower-cased; a quoted string that
    sqlglot reads as a column counts only if the gold database has such a column)."""
    import sqlglot
    from sqlglot import exp
    schemas = {db: schema_names(catalog, db) for db in catalog.databases}
    columns_of = {db: set().union(*schema.values()) for db, schema in schemas.items()}
    out = []
    for entry in entries:
        tree = sqlglot.parse_one(entry["query"], read="sqlite")
        tables = {t.name.lower() for t in tree.find_all(exp.Table)}
        columns = {c.name.lower() for c in tree.find_all(exp.Column)} & columns_of[entry["db_id"]]
        out.append(not any(tables <= schemas[db].keys() and columns <= columns_of[db]
                           for db in schemas if db != entry["db_id"]))
    return out


def expected_calibration_error(pairs, bins=10):
    """Over (probability, right) pairs: the mean gap between probability and share right, per bin of probability,
    weighted by the bin's size."""
    grouped = {}
    for p, right in pairs:
        grouped.setdefault(min(int(p * bins), bins - 1), []).append((p, right))
    return sum(abs(sum(p for p, _ in group) - sum(r for _, r in group)) for group in grouped.values()) / len(pairs)


def demo_probabilities(calibration, encoder):
    """Each demo question's best database and its probability, on the demo collection's memory with `calibration`."""
    with tempfile.TemporaryDirectory() as folder:
        demo_collection.build_collection(folder)
        memory = Memories.build(Catalog(folder), encoder=encoder,
                                descriptions=demo_collection.DESCRIPTIONS).selection
    memory.calibration = calibration
    out = []
    for question, expected in DEMO_QUESTIONS:
        top = memory.select(question, 1)[0]
        out.append({"question": question, "expected": expected, "best": top.database,
                    "p": round(top.probability, 4),
                    "selected": [m.database for m in memory.select_set(question, at_least_one=False)]})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spider", required=True)
    parser.add_argument("--zero-db", required=True)
    parser.add_argument("--objective", default="f1", choices=["f1", "likelihood"])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--lead", action="store_true", help="calibrate on the score and the lead over the others")
    parser.add_argument("--fit-no-database", action="store_true",
                        help="calibrate also on CommonsenseQA questions after the first --count")
    parser.add_argument("--gate", action="store_true",
                        help="gate the probabilities by the best score (needs --fit-no-database)")
    parser.add_argument("--exclude", action="append", default=[], metavar="SET.jsonl",
                        help="evaluation sets whose questions stay out of the fit")
    parser.add_argument("--encoder", default=None, help="encoder spec (default: relmem's default encoder)")
    args = parser.parse_args()
    if args.gate and not args.fit_no_database:
        parser.error("--gate needs --fit-no-database")
    encoder = load_encoder(args.encoder or default_encoder_name())
    no_database = fitting_no_database_questions(args.zero_db, args.count, args.exclude) if args.fit_no_database else []
    catalog = open_catalog(os.path.join(args.spider, "database"))
    memory, _ = bench.build_memory(catalog, encoder, None, False)
    dev = bench.load_questions(os.path.join(args.spider, "dev.json"))
    out = {"calibration": bench.calibrate(memory, os.path.join(args.spider, "train_spider.json"), dev, 0,
                                          bench.encoder_heldout_databases(encoder), objective=args.objective,
                                          lead=args.lead, no_database=no_database, gate=args.gate)}
    everything = len(memory)
    with open(os.path.join(args.spider, "dev.json")) as f:
        clear = clear_questions(json.load(f), catalog)
    right_confident = wrong_below = 0
    confident_by_clarity = {True: 0, False: 0}
    top = []
    for (text, dbs), is_clear in zip(dev, clear):
        ranking = memory.select(text, everything)
        top.append((ranking[0].probability, ranking[0].database in dbs))
        confident = max(m.probability for m in ranking if m.database in dbs) >= 0.8
        right_confident += confident
        confident_by_clarity[is_clear] += confident
        wrong_below += max(m.probability for m in ranking if m.database not in dbs) < 0.5
    out["dev_by_schema"] = {}
    for name, is_clear in (("clear", True), ("shared", False)):
        n = sum(c == is_clear for c in clear)
        out["dev_by_schema"][name] = {"n": n, "right_p_ge_0.8": confident_by_clarity[is_clear] / max(1, n)}
    out["dev"] = {"n": len(dev), "right_p_ge_0.8": right_confident / len(dev), "best_wrong_p_lt_0.5": wrong_below / len(dev),
                  "top_calibration_error": expected_calibration_error(top),
                  "selects_none": sum(not s for s in memory.select_set_batch([t for t, _ in dev], at_least_one=False))
                  / len(dev),
                  **bench.evaluate(memory, dev, [1, 5], False)}
    for name, texts in no_database_questions(args.zero_db, args.count).items():
        best = [memory.select(text, 1)[0].probability for text in texts]
        out[name] = {"n": len(texts), "best_p_lt_0.5": sum(p < 0.5 for p in best) / len(texts),
                     "selects_none": sum(not s for s in memory.select_set_batch(texts, at_least_one=False))
                     / len(texts)}
    top = memory.select(HAMLET, 1)[0]
    out["hamlet"] = {"best": top.database, "p": top.probability,
                     "selected": [m.database for m in memory.select_set(HAMLET, at_least_one=False)]}
    out["demo"] = demo_probabilities(memory.calibration, encoder)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
