#!/usr/bin/env python3
"""Writes Spider questions with schema words replaced by WordNet synonyms (relmem.bench.synonyms), e.g. to train on:

    .venv/bin/python scripts/make_synonym_questions.py --dbs ../shared/data/spider/database \\
        --questions ../shared/data/spider/train_spider.json --out train_synonyms.json --seed 1

Only questions with at least one replacement are written, as a JSON list like Spider's (question, db_id) with the
original question and the replacements beside them. `relmem bench selection --synonym-questions` builds the same
from its --questions (dev) and evaluates them.
"""
import argparse
import json
import sys

from relmem import Catalog, outputs
from relmem.bench.selection import load_questions
from relmem.bench.synonyms import synonym_questions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dbs", required=True, help="folder of the questions' SQLite databases")
    parser.add_argument("--questions", required=True, help="JSON list of {question, db_id}")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    questions = load_questions(args.questions)
    out = synonym_questions(questions, Catalog(args.dbs), args.seed)
    rows = [{"question": text, "db_id": dbs[0], "original": original, "replaced": replaced}
            for text, dbs, original, replaced in out]
    outputs.write_file(args.out, json.dumps(rows, indent=1))
    print(f"{len(rows)} of {len(questions)} questions with schema words replaced "
          f"({sum(len(r['replaced']) for r in rows)} words) -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
