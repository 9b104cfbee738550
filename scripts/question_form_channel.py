"""Would the selection memory rank better if each table were also embedded as questions one could ask of it?

An offline measurement for issue #14, not part of the memory: every table gets question forms ("How many singers
are there?", "What are the name, country, age of each singer?", its columns other than ids three at a time), encoded
by the sentence encoder; a candidate database's question-form similarity is the question's best cosine with its
forms. Each question's candidates and raw similarities come from SelectionMemory.similarities (whole questions, not
split into parts); their untrained score is recomputed from the raw similarities with the weights of
cpp/include/relmem/memories/relevance/similarity_fusion.hpp (mean fusion, lexical channel on), and w x the
question-form similarity is added for each w of --weights. Prints recall@1/2/3/5 per w for the --choose questions
(the weight is chosen there) and the --report ones (held out), and for 2-part template composites simulated from
those rankings (--pairs pairs drawn as make_composites draws them: two databases, then one question of each): the
share with both databases in the top 5 of the part rankings merged as SelectionMemory::merge_parts merges them (each
part's scores shifted to the same best), and the best any merge could reach (the two ranks add up to at most 5):

    OMP_NUM_THREADS=2 python3 scripts/question_form_channel.py --spider ../shared/data/spider
"""
import argparse
import json
import os

import random

import numpy as np

from relmem import Catalog, SelectionMemory
from relmem._relmem import identifier_words
from relmem.encoders import load_encoder

WEIGHTS = {"card": 0.2, "table": 0.1, "lexical_card": 0.625, "lexical_table": 0.25, "column": 0.2, "value": 0.01,
           "word_column": 0.4, "lexical_table_coverage": 0.2, "table_word_column": 0.25}  # similarity_fusion.hpp
KS = (1, 2, 3, 5)


def words(identifier):
    return " ".join(identifier_words(identifier)).lower()


def question_forms(table):
    name = words(table.name)
    columns = [words(c.name) for c in table.columns if not c.name.lower().endswith("id")]
    return [f"How many {name} are there?"] + [f"What are the {', '.join(columns[i:i + 3])} of each {name}?"
                                               for i in range(0, len(columns), 3)]


def form_vectors(catalog, encoder):
    """{database: unit rows of its tables' question forms}."""
    texts, owners = [], []
    for db in catalog.databases:
        for table in catalog.schema(db).tables:
            forms = question_forms(table)
            texts += forms
            owners += [db] * len(forms)
    rows = encoder.encode(texts)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    owners = np.array(owners)
    return {db: rows[owners == db] for db in catalog.databases}


def rankings(memory, encoder, forms, questions, weights):
    """{w: per question, its candidates best first as [(database, score)]} over [(text, gold database)]."""
    texts = [text for text, _ in questions]
    vectors = encoder.encode(texts)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ranked = {w: [] for w in weights}
    for vector, (databases, raw) in zip(vectors, memory.similarities(texts)):
        untrained = sum(weight * raw[field] for field, weight in WEIGHTS.items())
        form = np.array([float(np.max(forms[db] @ vector)) for db in databases])
        for w in weights:
            score = untrained + w * form
            ranked[w].append([(databases[i], float(score[i])) for i in np.argsort(-score, kind="stable")])
    return ranked


def rank_of(ranking, gold):
    return next((r for r, (db, _) in enumerate(ranking, 1) if db == gold), 10 ** 6)


def template_pairs(ranked, questions, pairs, seed=0):
    """(merged, best merge): shares of simulated 2-part composites with both databases in the top 5."""
    by_database = {}
    for i, (_, gold) in enumerate(questions):
        by_database.setdefault(gold, []).append(i)
    databases, rng = sorted(by_database), random.Random(seed)
    merged = best = 0
    for _ in range(pairs):
        a, b = (rng.choice(by_database[db]) for db in rng.sample(databases, 2))
        shifted = {}
        for ranking in (ranked[a], ranked[b]):
            for db, score in ranking:
                shifted[db] = max(shifted.get(db, -np.inf), score - ranking[0][1])
        top5 = sorted(shifted, key=lambda db: -shifted[db])[:5]
        merged += questions[a][1] in top5 and questions[b][1] in top5
        best += rank_of(ranked[a], questions[a][1]) + rank_of(ranked[b], questions[b][1]) <= 5
    return round(merged / pairs, 4), round(best / pairs, 4)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spider", required=True, help="Spider folder (database/, train_spider.json, dev.json)")
    parser.add_argument("--choose", default="train_spider.json", help="questions the weight is chosen on")
    parser.add_argument("--report", default="dev.json", help="held-out questions")
    parser.add_argument("--weights", default="0,0.2,0.3,0.4,0.5,0.6")
    parser.add_argument("--pairs", type=int, default=5000, help="simulated 2-part template composites")
    args = parser.parse_args()
    catalog = Catalog(os.path.join(args.spider, "database"))
    encoder = load_encoder("use-lite")
    memory = SelectionMemory.build(catalog, encoder)
    forms = form_vectors(catalog, encoder)
    weights = [float(w) for w in args.weights.split(",")]
    for name in (args.choose, args.report):
        with open(os.path.join(args.spider, name), encoding="utf-8") as f:
            questions = [(q["question"], q["db_id"]) for q in json.load(f)]
        for w, ranked in rankings(memory, encoder, forms, questions, weights).items():
            ranks = np.array([rank_of(r, gold) for r, (_, gold) in zip(ranked, questions)])
            merged, best = template_pairs(ranked, questions, args.pairs)
            print(json.dumps({"questions": name, "n": len(questions), "weight": w,
                              **{f"recall@{k}": round(float(np.mean(ranks <= k)), 4) for k in KS},
                              "template_pairs_all_in_top5": merged, "template_pairs_best_merge": best}), flush=True)


if __name__ == "__main__":
    main()
