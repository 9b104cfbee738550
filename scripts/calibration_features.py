"""Which features a selection probability can be fitted on: logistic fits of the top-5 candidates' raw similarities.

    python scripts/calibration_features.py --spider ../shared/data/spider [--questions 4000]

Builds the untrained memory (default encoder) on every Spider database and ranks a seeded sample of train_spider.json
questions. Each question's top 5 candidates by the untrained score are the examples (the right database the
positive): fitted (logistic regression, Newton steps) on the questions of half the training databases and measured
on the other half. Per feature set it prints the held-out log loss, the share of questions whose right database gets
p >= 0.8, the share whose wrong candidates all get p < 0.5, and how often a candidate with p >= 0.8 is right. Nothing
of Spider dev is read.
"""
import argparse
import json
import os
import random

import numpy as np

from relmem import SelectionMemory
from relmem.encoders import default_encoder_name, load_encoder
from relmem.engines import open_catalog

WEIGHTS = SelectionMemory.untrained_weights
FIELDS = list(SelectionMemory.raw_fields)
RAW_FEATURES = ("word_lead", "lexical_table_coverage", "word_column", "card", "question_form")
FEATURE_SETS = (("score",), ("score", "lead"), ("score", "lead", "word_lead"),
                ("score", "lead", "word_lead", "lexical_table_coverage"),
                ("score", "lead") + RAW_FEATURES)


def examples(memory, questions, fit_databases):
    """(question index, fitted on, right, features) for each question's top 5 candidates."""
    out = []
    found = memory.similarities([text for text, _ in questions])
    for i, ((_, gold), (candidates, raw)) in enumerate(zip(questions, found)):
        score = sum(WEIGHTS[f] * np.asarray(raw[f]) for f in FIELDS)
        for j in np.argsort(-score)[:5]:
            best_other = np.max(np.delete(score, j)) if len(score) > 1 else 0.0
            features = {"score": score[j], "lead": score[j] - best_other}
            features.update({f: float(raw[f][j]) for f in RAW_FEATURES})
            out.append((i, gold in fit_databases, candidates[j] == gold, features))
    return out


def logistic_fit(x, y, steps=300, l2=1e-3, weights=None):
    """Weights of the columns of x and a bias (last): L2-damped logistic regression by Newton steps, each example
    counting `weights` times (default once)."""
    x = np.hstack([x, np.ones((len(x), 1))])
    weights = np.ones(len(x)) if weights is None else weights
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        hessian = (x * (weights * p * (1 - p))[:, None]).T @ x + l2 * np.eye(len(w))
        w -= np.linalg.solve(hessian, x.T @ (weights * (p - y)) + l2 * w)
    return w


def measure(rows, names):
    x = np.array([[r[3][n] for n in names] for r in rows])
    y = np.array([r[2] for r in rows], float)
    fitted = np.array([r[1] for r in rows])
    question = np.array([r[0] for r in rows])
    p = 1 / (1 + np.exp(-np.hstack([x, np.ones((len(x), 1))]) @ logistic_fit(x[fitted], y[fitted])))
    held = ~fitted
    loss = -np.mean(y[held] * np.log(p[held] + 1e-9) + (1 - y[held]) * np.log(1 - p[held] + 1e-9))
    right = wrong_low = 0
    ids = np.unique(question[held])
    for i in ids:
        mine = question == i
        right += bool(np.any(p[mine][y[mine] == 1] >= 0.8))
        wrong_low += bool(np.all(p[mine][y[mine] == 0] < 0.5))
    confident = held & (p >= 0.8)
    return {"features": list(names), "questions": len(ids), "log_loss": round(float(loss), 4),
            "right_p_at_least_0.8": round(right / len(ids), 3), "wrong_all_below_0.5": round(wrong_low / len(ids), 3),
            "right_when_p_at_least_0.8": round(float(y[confident].mean()), 3) if confident.any() else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spider", required=True, help="Spider folder (train_spider.json, database/)")
    parser.add_argument("--questions", type=int, default=4000, help="train questions sampled (default 4000)")
    args = parser.parse_args()
    with open(os.path.join(args.spider, "train_spider.json")) as f:
        train = json.load(f)
    databases = sorted({q["db_id"] for q in train})
    random.Random(0).shuffle(databases)
    fit_databases = set(databases[:len(databases) // 2])
    questions = [(q["question"], q["db_id"]) for q in train]
    random.Random(1).shuffle(questions)
    questions = questions[:args.questions]
    memory = SelectionMemory.build(open_catalog(os.path.join(args.spider, "database")),
                                   load_encoder(default_encoder_name()))
    rows = examples(memory, questions, fit_databases)
    for names in FEATURE_SETS:
        print(json.dumps(measure(rows, names)))


if __name__ == "__main__":
    main()
