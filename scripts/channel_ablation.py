"""Which hand-built channels of the untrained selection score still pay for themselves, per encoder.

    python scripts/channel_ablation.py --spider ../shared/data/spider [--encoders use-lite,minilm] [--n 2000]

Builds the selection memory on every Spider database per encoder (and once more without WordNet synonyms), then
ranks a seeded sample of `train_spider.json` questions and their WordNet synonym versions by the untrained score of
their raw similarities, with all its terms and with one channel's terms set to zero at a time. Prints recall@1 and
recall@5 per encoder, set and variant as JSON lines. The ranking is that of each whole question's raw similarities
(no split into parts, no calibration), so its recall differs slightly from `relmem bench selection`'s. Nothing of
Spider dev is read.
"""
import argparse
import json
import os
import random

from relmem import SelectionMemory
from relmem.bench.synonyms import synonym_questions
from relmem.encoders import load_encoder
from relmem.engines import open_catalog
from tuned_dense_terms import FIELDS, WEIGHTS, raw_similarities, recall_of_scores
CHANNELS = {  # variant: the terms it sets to zero
    "all terms": (),
    "no dense card and tables": ("card", "table"),
    "no dense columns": ("column",),
    "no lexical card and tables": ("lexical_card", "lexical_table"),
    "no lexical table coverage": ("lexical_table_coverage",),
    "no word channel": ("word_column", "table_word_column"),
    "no question forms": ("question_form",),
    "no stored values": ("value",),
    "no hubness": ("hubness",),
}


def question_sets(spider, catalog, n, seed):
    with open(os.path.join(spider, "train_spider.json")) as f:
        present = set(catalog.databases)
        questions = [(q["question"], [q["db_id"]]) for q in json.load(f) if q["db_id"] in present]
    questions = random.Random(seed).sample(questions, min(n, len(questions)))
    synonyms = [(text, dbs) for text, dbs, _, _ in synonym_questions(questions, catalog, seed)]
    return {"train questions": questions, "their synonym versions": synonyms}


def recall(questions, similarities, zeroed):
    """recall@1 and recall@5 under the untrained weights with the `zeroed` terms set to zero."""
    weights = {f: 0.0 if f in zeroed else WEIGHTS[f] for f in FIELDS}
    scores = [{db: sum(weights[f] * terms[f] for f in FIELDS) for db, terms in of_question.items()}
              for of_question in similarities]
    return recall_of_scores(questions, scores)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spider", required=True, help="Spider folder (train_spider.json, database/)")
    parser.add_argument("--encoders", default="use-lite,minilm", help="comma-separated encoder specs")
    parser.add_argument("--n", type=int, default=2000, help="train questions drawn (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    catalog = open_catalog(os.path.join(args.spider, "database"))
    sets = question_sets(args.spider, catalog, args.n, args.seed)
    for spec in args.encoders.split(","):
        encoder = load_encoder(spec)
        for synonyms in (True, False):
            memory = SelectionMemory.build(catalog, encoder, synonyms=synonyms)
            variants = CHANNELS if synonyms else {"no WordNet synonyms": ()}
            for name, questions in sets.items():
                similarities = raw_similarities(memory, questions)
                for variant, zeroed in variants.items():
                    r1, r5 = recall(questions, similarities, zeroed)
                    print(json.dumps({"encoder": spec, "set": name, "n": len(questions), "variant": variant,
                                      "recall@1": r1, "recall@5": r5}), flush=True)


if __name__ == "__main__":
    main()
