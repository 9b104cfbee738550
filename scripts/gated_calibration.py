"""Calibration forms of the selection probability, cross-fitted on training databases and questions no database answers.

    python scripts/gated_calibration.py --spider ../shared/data/spider --zero-db ../shared/data/zero_db \
        --exclude docs/eval/llm/set.jsonl [--encoder SPEC]

Builds the untrained memory (on --encoder) on every Spider database and takes the calibration sample that
`relmem bench selection` takes (2,000 train_spider.json questions, seed 0; a fine-tuned encoder's held-out databases
only) and the CommonsenseQA dev questions that scripts/selection_probabilities.py fits on as questions no database
answers. Each question's top 10 candidates (score, lead over the best other) are the examples. Every form is fitted
on the questions of half the training databases and half the CommonsenseQA questions and measured on the other
halves, both ways. Per form: held-out log loss (questions with a database, questions without, their mean), the top
candidate's expected calibration error (10 bins), the share of questions whose right database gets p >= 0.8 (all,
and those clear by the schema), and the share of questions without a database whose best candidate gets p < 0.5.
Nothing of Spider dev is read but its question texts, which stay out of the sample.
"""
import argparse
import json
import os
import random
import zlib

import numpy as np

from calibration_features import logistic_fit
from relmem.bench import selection as bench
from relmem.encoders import default_encoder_name, load_encoder
from relmem.engines import open_catalog
from selection_probabilities import clear_questions, expected_calibration_error, fitting_no_database_questions

CANDIDATES = 10
SAMPLE = 2000


def top_candidates(memory, texts, gold):
    """Per question: (scores, leads, relevant) of its top candidates, best first."""
    out = []
    for text, dbs in zip(texts, gold):
        ranking = memory.select(text, CANDIDATES)
        s = np.array([m.score for m in ranking], float)
        lead = np.array([s[i] - (s[1] if i == 0 else s[0]) for i in range(len(s))])
        out.append((s, lead, np.array([m.database in dbs for m in ranking], float)))
    return out


def features(question, interactions=False):
    s, lead, _ = question
    columns = [s, lead] + ([s * lead, lead ** 2, s ** 2] if interactions else [])
    return np.stack(columns, 1)


def sigmoid_of(beta, x):
    return 1 / (1 + np.exp(-(x @ beta[:-1] + beta[-1])))


def one_sigmoid(answered, unanswered, group_weight=True, interactions=False):
    """p = sigmoid(a s + l lead + b) over every candidate, questions without a database weighing as much as the
    others as a group (as SelectionMemory.calibrate does) or one each."""
    rows = answered + unanswered
    x = np.vstack([features(q, interactions) for q in rows])
    y = np.concatenate([q[2] for q in rows])
    n1 = sum(len(q[2]) for q in answered)
    w = np.concatenate([np.ones(n1), np.full(len(y) - n1, n1 / (len(y) - n1) if group_weight else 1.0)])
    beta = logistic_fit(x, y, weights=w)
    return lambda q: sigmoid_of(beta, features(q, interactions))


def gated(answered, unanswered):
    """p = sigmoid(g best + c) * sigmoid(a s + l lead + b): the gate on the best score (questions without a database
    against the others, equal groups), the ranking on the questions with a database."""
    x = np.vstack([features(q) for q in answered])
    rank = logistic_fit(x, np.concatenate([q[2] for q in answered]))
    best = np.array([[q[0][0]] for q in answered + unanswered])
    label = np.array([1.0] * len(answered) + [0.0] * len(unanswered))
    gate = logistic_fit(best, label, weights=np.where(label == 1, 1.0, len(answered) / len(unanswered)))
    return lambda q: sigmoid_of(gate, np.array([q[0][0]])) * sigmoid_of(rank, features(q))


FORMS = {
    "one sigmoid (served)": lambda a, u, clear: one_sigmoid(a, u),
    "one sigmoid, no-database questions one each": lambda a, u, clear: one_sigmoid(a, u, group_weight=False),
    "one sigmoid with s*lead, lead^2, s^2": lambda a, u, clear: one_sigmoid(a, u, interactions=True),
    "one sigmoid, clear questions only": lambda a, u, clear: one_sigmoid([q for q, c in zip(a, clear) if c], u),
    "gated": lambda a, u, clear: gated(a, u),
    "gated, ranking on clear questions only": lambda a, u, clear: gated([q for q, c in zip(a, clear) if c], u),
}


def measure(probability, answered, clear, unanswered):
    loss_db, loss_none, right, right_clear, top_p, top_y, none_below = [], [], [], [], [], [], []
    for q, is_clear in zip(answered, clear):
        p = np.clip(probability(q), 1e-6, 1 - 1e-6)
        y = q[2]
        loss_db.append(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
        confident = bool(y.any() and p[y == 1].max() >= 0.8)
        right.append(confident)
        if is_clear:
            right_clear.append(confident)
        top_p.append(p[0])
        top_y.append(y[0])
    for q in unanswered:
        p = np.clip(probability(q), 1e-6, 1 - 1e-6)
        loss_none.append(-np.mean(np.log(1 - p)))
        none_below.append(p.max() < 0.5)
    return loss_db, loss_none, right, right_clear, top_p, top_y, none_below


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spider", required=True)
    parser.add_argument("--zero-db", required=True)
    parser.add_argument("--count", type=int, default=500, help="the first CommonsenseQA questions, never fitted")
    parser.add_argument("--exclude", action="append", default=[], metavar="SET.jsonl")
    parser.add_argument("--encoder", default=None)
    args = parser.parse_args()
    encoder = load_encoder(args.encoder or default_encoder_name())
    catalog = open_catalog(os.path.join(args.spider, "database"))
    memory, _ = bench.build_memory(catalog, encoder, None, False)
    dev_texts = {text for text, _ in bench.load_questions(os.path.join(args.spider, "dev.json"))}
    allowed = bench.encoder_heldout_databases(encoder)
    with open(os.path.join(args.spider, "train_spider.json")) as f:
        entries = [e for e in json.load(f) if e["question"] not in dev_texts and e["db_id"] in memory
                   and (allowed is None or e["db_id"] in allowed)]
    sample = random.Random(0).sample(entries, min(SAMPLE, len(entries)))
    answered = top_candidates(memory, [e["question"] for e in sample], [[e["db_id"]] for e in sample])
    clear = clear_questions(sample, catalog)
    none_texts = fitting_no_database_questions(args.zero_db, args.count, args.exclude)
    unanswered = top_candidates(memory, none_texts, [[]] * len(none_texts))
    half = np.array([zlib.crc32(e["db_id"].encode()) % 2 for e in sample])
    none_half = np.arange(len(unanswered)) % 2
    print(f"{len(sample)} questions on {len(set(e['db_id'] for e in sample))} databases, "
          f"{sum(clear)} clear by the schema; {len(unanswered)} questions without a database")
    for name, form in FORMS.items():
        results = [[] for _ in range(7)]
        for h in (0, 1):
            fit = [i for i in range(len(sample)) if half[i] == h]
            probability = form([answered[i] for i in fit], [q for q, x in zip(unanswered, none_half) if x == h],
                               [clear[i] for i in fit])
            test = [i for i in range(len(sample)) if half[i] != h]
            for total, part in zip(results, measure(probability, [answered[i] for i in test],
                                                    [clear[i] for i in test],
                                                    [q for q, x in zip(unanswered, none_half) if x != h])):
                total.extend(part)
        loss_db, loss_none, right, right_clear, top_p, top_y, none_below = results
        print(json.dumps({"form": name, "log_loss_database": round(np.mean(loss_db), 4),
                          "log_loss_no_database": round(np.mean(loss_none), 4),
                          "log_loss_mean": round((np.mean(loss_db) + np.mean(loss_none)) / 2, 4),
                          "top_ece": round(expected_calibration_error(list(zip(top_p, top_y))), 3),
                          "right_p_ge_0.8": round(np.mean(right), 3),
                          "clear_right_p_ge_0.8": round(np.mean(right_clear), 3),
                          "no_database_best_p_lt_0.5": round(np.mean(none_below), 3)}))


if __name__ == "__main__":
    main()
