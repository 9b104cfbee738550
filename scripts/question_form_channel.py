"""Would the selection memory rank better if each table were also embedded as questions one could ask of it?

An offline measurement for issue #14, not part of the memory: every table gets question forms ("How many singers
are there?", "What are the name, country, age of each singer?", its columns other than ids three at a time), encoded
by the sentence encoder; a candidate database's question-form similarity is the question's best cosine with its
forms. Each question's candidates and raw similarities come from SelectionMemory.similarities (whole questions, not
split into parts); their untrained score is recomputed from the raw similarities with the weights of
cpp/include/relmem/memories/relevance/similarity_fusion.hpp (mean fusion, lexical channel on), and w x the
question-form similarity is added for each w of --weights. Prints recall@1/2/3/5 per w for the --choose questions
(the weight is chosen there) and the --report ones (held out):

    OMP_NUM_THREADS=2 python3 scripts/question_form_channel.py --spider ../shared/data/spider
"""
import argparse
import json
import os

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


def recalls(memory, encoder, forms, questions, weights):
    """{w: [recall@k for KS]} over [(text, gold database)]."""
    texts = [text for text, _ in questions]
    vectors = encoder.encode(texts)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ranks = {w: [] for w in weights}
    for (text, gold), vector, (databases, raw) in zip(questions, vectors, memory.similarities(texts)):
        untrained = sum(weight * raw[field] for field, weight in WEIGHTS.items())
        form = np.array([float(np.max(forms[db] @ vector)) for db in databases])
        for w in weights:
            score = untrained + w * form
            ranks[w].append(1 + int(np.sum(score > score[databases.index(gold)])) if gold in databases else 10 ** 6)
    return {w: [round(float(np.mean(np.array(r) <= k)), 4) for k in KS] for w, r in ranks.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spider", required=True, help="Spider folder (database/, train_spider.json, dev.json)")
    parser.add_argument("--choose", default="train_spider.json", help="questions the weight is chosen on")
    parser.add_argument("--report", default="dev.json", help="held-out questions")
    parser.add_argument("--weights", default="0,0.2,0.3,0.4,0.5,0.6")
    args = parser.parse_args()
    catalog = Catalog(os.path.join(args.spider, "database"))
    encoder = load_encoder("use-lite")
    memory = SelectionMemory.build(catalog, encoder)
    forms = form_vectors(catalog, encoder)
    weights = [float(w) for w in args.weights.split(",")]
    for name in (args.choose, args.report):
        with open(os.path.join(args.spider, name), encoding="utf-8") as f:
            questions = [(q["question"], q["db_id"]) for q in json.load(f)]
        for w, figures in recalls(memory, encoder, forms, questions, weights).items():
            print(json.dumps({"questions": name, "n": len(questions), "weight": w,
                              **{f"recall@{k}": r for k, r in zip(KS, figures)}}), flush=True)


if __name__ == "__main__":
    main()
