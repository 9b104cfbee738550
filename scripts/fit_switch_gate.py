"""Fits the selection gate of the context switch (PipelineConfig.switch_gate) for a memory.

    python scripts/fit_switch_gate.py --memory MEMDIR --spider ../shared/data/spider --zero-db ../shared/data/zero_db \
        --exclude docs/eval/llm/set.jsonl

Questions that need a database: --count questions of train_spider.json (seeded). Questions that need none: --count
questions of zero_db (SQuAD 2.0 passages and CommonsenseQA, written as `relmem eval build` writes them), without the
ones any --exclude set holds. Each question's features are the score of its best database and that score's margin
over the tenth; a logistic regression on them gives the gate (score weight, margin weight, bias). Prints JSON: the
gate, and the share of each group it sends to the databases (p >= 0.5), and of --doubles questions on two databases
(two train questions composed as `relmem eval build` composes double-DB items), which the gate sends when the whole
or one of its two parts passes (SelectionSwitch). Fits on training questions only: Spider dev is not read.
"""
import argparse
import json
import random

import numpy as np

from relmem.agent import Memories, PipelineConfig, SelectionSwitch, State
from relmem.agent.stages.context import lead_features
from relmem.eval.compose import double_items, spider_parts, switch_questions


def features(selection, questions):
    return np.array([lead_features(selection.select(question, SelectionSwitch.DEPTH)) for question in questions],
                    dtype=np.float64)


def doubles_sent(selection, spider_dir, count, seed, gate):
    parts = spider_parts(spider_dir, questions="train_spider.json")
    questions = [item.question for item in double_items(random.Random(seed), parts, count)]
    switch = SelectionSwitch(selection, PipelineConfig(switch_gate=gate))
    sent = 0
    for question in questions:
        state = State(question)
        switch.run(state)
        sent += state.needs_data
    return round(sent / len(questions), 4)


def fit_logistic(x, y, steps=100):
    """Weights then bias of p = sigmoid(x w + b), by Newton's method on the mean log loss."""
    xb = np.c_[x, np.ones(len(x))]
    w = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-xb @ w))
        hessian = (xb * (p * (1 - p))[:, None]).T @ xb + 1e-9 * np.eye(len(w))
        w -= np.linalg.solve(hessian, xb.T @ (p - y))
    return w


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", required=True, metavar="MEMDIR")
    parser.add_argument("--spider", required=True)
    parser.add_argument("--zero-db", required=True)
    parser.add_argument("--exclude", action="append", default=[], metavar="SET.jsonl",
                        help="evaluation sets whose zero-DB questions are left out of the fit")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--doubles", type=int, default=300, metavar="N",
                        help="double-DB questions of train_spider.json to measure the gate on (0: none)")
    args = parser.parse_args()
    selection = Memories.load(args.memory).selection
    questions = switch_questions(args.spider, args.zero_db, args.count, args.seed, args.exclude)
    needs, no_needs = features(selection, questions["train_spider"]), features(selection, questions["zero_db"])
    w = fit_logistic(np.vstack([needs, no_needs]), np.r_[np.ones(len(needs)), np.zeros(len(no_needs))])

    def sent(x):
        return round(float(np.mean(np.c_[x, np.ones(len(x))] @ w >= 0)), 4)
    report = {"switch_gate": [round(float(v), 2) for v in w],
              "train_spider": {"n": len(needs), "sent_to_databases": sent(needs)},
              "zero_db": {"n": len(no_needs), "sent_to_databases": sent(no_needs)}}
    if args.doubles:
        report["train_doubles"] = {"n": args.doubles, "sent_to_databases": doubles_sent(
            selection, args.spider, args.doubles, args.seed + 1, tuple(report["switch_gate"]))}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
