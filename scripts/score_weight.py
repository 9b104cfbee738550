"""The weight of one term of the selection memory's untrained score (similarity_fusion.hpp: kQuestionFormWeight for
--field question_form, kHubnessWeight for --field hubness), measured on other questions than Spider dev.

Each question's candidates and raw similarities come from SelectionMemory.similarities (whole questions, not split
into parts); their untrained score is recomputed with every weight of similarity_fusion.hpp but the field's, which
takes each value of --weights in turn, with the sign the field has there (the hubness term is subtracted). Prints
recall@1/2/3/5 per weight for the questions and for their versions with schema words replaced by WordNet synonyms
(relmem.bench.synonyms, as training/synonym_questions.py makes them):

    OMP_NUM_THREADS=2 .venv/bin/python scripts/score_weight.py --dbs $S/database \\
        --questions $S/train_spider.json --field hubness

With --heldout-of MODEL the collection is the databases of --questions alone, and the figures are given apart for the
questions of the databases that the model's trainer held out (its file names them) and for the others: a weight chosen
on the others should hold on the held-out ones, databases whose questions played no part in the choice.
"""
import argparse
import json

import numpy as np

from relmem import Catalog, RelevanceModel, SelectionMemory
from relmem.bench.synonyms import synonym_questions

WEIGHTS = {name: weight for name, weight in SelectionMemory.untrained_weights.items() if weight != 0.0}
KS = (1, 2, 3, 5)


def recalls(memory, questions, field, weights):
    """{w: [recall@k for KS]} over [(text, gold database)]."""
    sign = 1.0 if WEIGHTS[field] >= 0 else -1.0  # --weights are magnitudes: the field's term keeps its sign
    ranks = {w: [] for w in weights}
    for (_, gold), (databases, raw) in zip(questions, memory.similarities([text for text, _ in questions])):
        rest = sum(weight * raw[name] for name, weight in WEIGHTS.items() if name != field)
        for w in weights:
            score = rest + sign * w * raw[field]
            ranks[w].append(1 + int(np.sum(score > score[databases.index(gold)])) if gold in databases else 10 ** 6)
    return {w: [round(float(np.mean(np.array(r) <= k)), 4) for k in KS] for w, r in ranks.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--questions", required=True, help="JSON list of {question, db_id}")
    parser.add_argument("--field", default="question_form", choices=("question_form", "hubness"))
    parser.add_argument("--weights", default="0,0.2,0.3,0.4,0.5")
    parser.add_argument("--heldout-of", metavar="MODEL",
                        help="a relevance model file: its trainer's held-out databases' questions are reported apart")
    args = parser.parse_args()
    catalog = Catalog(args.dbs)
    weights = [float(w) for w in args.weights.split(",")]
    with open(args.questions, encoding="utf-8") as f:
        questions = [(q["question"], q["db_id"]) for q in json.load(f) if q.get("db_id") in catalog]
    heldout = set()
    if args.heldout_of:
        heldout = set(RelevanceModel.load(args.heldout_of).training_info.get("heldout_database_names", []))
        if not heldout & {db for _, db in questions}:
            parser.error(f"{args.heldout_of} names no held-out database of --questions")
        catalog = Catalog([catalog.path(db) for db in sorted({db for _, db in questions})])
    memory = SelectionMemory.build(catalog, "use-lite")
    versions = [(text, dbs[0]) for text, dbs, _, _ in synonym_questions([(t, [db]) for t, db in questions], catalog, 0)]
    for name, asked in (("questions", questions), ("synonym versions", versions)):
        groups = {"all": asked}
        if heldout:
            groups = {"others": [q for q in asked if q[1] not in heldout],
                      "held-out": [q for q in asked if q[1] in heldout]}
        for group, chosen in groups.items():
            for w, figures in recalls(memory, chosen, args.field, weights).items():
                print(json.dumps({"set": name, "databases": group, "n": len(chosen), "field": args.field, "weight": w,
                                  **{f"recall@{k}": r for k, r in zip(KS, figures)}}), flush=True)


if __name__ == "__main__":
    main()
