"""Training questions plus, for each one in which schema words can be replaced by WordNet synonyms, that replaced
version (relmem.bench.synonyms): the augmentation that teaches the relevance model questions which name things
with other words than the schema. Only training questions are used (Spider-Syn, -Realistic and -DK never).

    .venv/bin/python training/synonym_questions.py --data ../shared/data/spider/train_spider.json \\
        --dbs ../shared/data/spider/database --out /tmp/train_synonyms.json
"""
import argparse
import json
import random
import sys

from relmem import Catalog, outputs
from relmem.bench.selection import load_questions
from relmem.bench.synonyms import synonym_questions


def augmented(questions, catalog, seed, share=1.0):
    """[{question, db_id | db_ids}] of the questions, then the synonym version of each that has one, of a random
    `share` of them."""
    out = [{"question": text, **({"db_id": dbs[0]} if len(dbs) == 1 else {"db_ids": dbs})} for text, dbs in questions]
    versions = synonym_questions(questions, catalog, seed)
    kept = random.Random(seed).sample(versions, round(share * len(versions)))
    out += [{"question": text, "db_id": dbs[0]} for text, dbs, _, _ in kept]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="JSON list of {question, db_id | db_ids}")
    parser.add_argument("--dbs", required=True, help="folder of the questions' SQLite databases")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--share", type=float, default=1.0, help="share of the synonym versions kept (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    catalog = Catalog(args.dbs)
    questions = [q for q in load_questions(args.data) if all(db in catalog for db in q[1])]
    if not 0.0 <= args.share <= 1.0:
        parser.error("--share must be between 0 and 1")
    out = augmented(questions, catalog, args.seed, args.share)
    outputs.write_file(args.out, json.dumps(out))
    print(f"{len(questions)} questions, {len(out) - len(questions)} synonym versions -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
