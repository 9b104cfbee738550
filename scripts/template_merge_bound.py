"""How many 2-part template composites could keep both their databases in the top 5, and how many a merge of the two
part rankings keeps, simulated from whole-question rankings (the parts of a template composite are ranked as the
questions they were made of).

Each question's untrained ranking comes from SelectionMemory.similarities and the untrained weights of
cpp/include/relmem/memories/relevance/similarity_fusion.hpp. Pairs draw two different databases uniformly, then one
question of each, as the C++ make_composites does. Prints, per set, the share of pairs where:
  bound     the two gold ranks add up to at most 5 (the best any merge of the two rankings can do),
  gap       each database scores its gap to its part's best (the shipped merge_parts, without its tie-breaks),
  rank_L    the gap minus L per rank below the part's best,
  softmax_T a greedy pick maximizing the product of each part's covered softmax(score / T) probability.

    OMP_NUM_THREADS=2 .venv/bin/python scripts/template_merge_bound.py --dbs $S/database \\
        --questions $S/train_spider.json $S/dev.json
"""
import argparse
import json
import random

import numpy as np

from score_weight import WEIGHTS  # similarity_fusion.hpp
from relmem import Catalog, SelectionMemory


def rankings(memory, questions):
    """Per question: (databases best first, their scores, the gold database's rank or None)."""
    out = []
    for (_, gold), (databases, raw) in zip(questions, memory.similarities([text for text, _ in questions])):
        score = sum(weight * np.asarray(raw[field]) for field, weight in WEIGHTS.items())
        order = np.argsort(-score, kind="stable")
        names = [databases[i] for i in order]
        out.append((names, score[order], names.index(gold) + 1 if gold in names else None))
    return out


def merge_by_gap(parts, penalty=0.0, k=5):
    best = {}
    for names, scores, _ in parts:
        for rank, (name, score) in enumerate(zip(names, scores)):
            best[name] = max(best.get(name, -np.inf), score - scores[0] - penalty * rank)
    return sorted(best, key=lambda name: -best[name])[:k]


def merge_by_softmax(parts, temperature, k=5):
    probabilities = []
    for names, scores, _ in parts:
        p = np.exp((scores - scores[0]) / temperature)
        probabilities.append(dict(zip(names, p / p.sum())))
    covered, chosen = [0.0] * len(parts), []
    left = set().union(*probabilities)
    while len(chosen) < k and left:
        def gain(name):
            return np.prod([c + p.get(name, 0.0) for c, p in zip(covered, probabilities)])
        name = max(sorted(left), key=gain)
        left.remove(name)
        chosen.append(name)
        covered = [c + p.get(name, 0.0) for c, p in zip(covered, probabilities)]
    return chosen


MERGES = {"gap": merge_by_gap,
          **{f"rank_{penalty}": (lambda penalty: lambda parts: merge_by_gap(parts, penalty))(penalty)
             for penalty in (0.005, 0.01, 0.02, 0.04)},
          **{f"softmax_{t}": (lambda t: lambda parts: merge_by_softmax(parts, t))(t) for t in (0.01, 0.03, 0.08)}}


def simulate(questions, ranked, pairs, seed):
    rng = random.Random(seed)
    by_database = {}
    for i, (_, gold) in enumerate(questions):
        by_database.setdefault(gold, []).append(i)
    databases = sorted(by_database)
    kept = {"bound": 0, **{name: 0 for name in MERGES}}
    for _ in range(pairs):
        picked = [rng.choice(by_database[db]) for db in rng.sample(databases, 2)]
        parts = [ranked[i] for i in picked]
        golds = [questions[i][1] for i in picked]
        kept["bound"] += all(r is not None for _, _, r in parts) and sum(r for _, _, r in parts) <= 5
        for name, merge in MERGES.items():
            top = merge(parts)
            kept[name] += all(gold in top for gold in golds)
    return {name: round(count / pairs, 4) for name, count in kept.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--questions", required=True, nargs="+", help="JSON lists of {question, db_id}")
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    catalog = Catalog(args.dbs)
    memory = SelectionMemory.build(catalog, "use-lite")
    for path in args.questions:
        with open(path, encoding="utf-8") as f:
            questions = [(q["question"], q["db_id"]) for q in json.load(f) if q.get("db_id") in catalog]
        figures = simulate(questions, rankings(memory, questions), args.pairs, args.seed)
        print(json.dumps({"questions": path, "pairs": args.pairs, **figures}), flush=True)


if __name__ == "__main__":
    main()
