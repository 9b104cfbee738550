#!/usr/bin/env python3
"""Fits the value memory's replacement confidence (cpp/src/memories/values/value_confidence.cpp) on the tune fold.

For every case of the fold (scripts/make_value_cases.py) whose literal its column does not store, the evidence for
replacing it by the lookup's best candidate (relmem.values.replacement_evidence) and whether that is right: the best
candidate is the gold value (an "absent" case has none, so replacing it is always wrong). Cases behind a gate are
never replaced and take no part in the fit. A logistic regression (Newton's method, L2 penalty) gives the weights;
the threshold is the one that gets most cases right (a right replacement, or an absent value left alone) while
replacing at most --max-absent-replaced of the fold's absent values. Prints the memory encoder's entry of kFitted to
paste into value_confidence.cpp and a JSON summary.

The L2 penalty and that budget are chosen by cross-validation inside the fold (--cross-validate K, the default 5):
its databases are split into K groups by a seeded hash; each setting of --l2-grid x --budget-grid is fit on K-1
groups and applied to the K-th, and the setting with the most right outcomes over the K held-back groups wins among
those that replaced at most --target-absent-replaced of their absent values (2% by default). No case of the other
fold is read. --cross-validate 0 fits --l2 and --max-absent-replaced as given.

    .venv/bin/python scripts/fit_value_confidence.py --dbs ../shared/data/spider/database --cases value_cases.jsonl
"""
import argparse
import hashlib
import json
import sys

import numpy as np


def case_rows(memory, catalog, cases, k=10):
    """(features, gate, right, absent) per case whose perturbed literal is checked as not stored, with candidates."""
    from relmem.values import replacement_evidence
    rows = []
    for case in cases:
        checks, _ = memory.check_values(case["perturbed_sql"], case["db_id"], catalog, k)
        for check in checks:
            if (check.status != "not_found" or not check.similar or "LIKE" in check.op.upper()
                    or check.table != case["table"] or check.column != case["column"]
                    or check.value != case["perturbed_value"]):
                continue
            column = memory.column(case["db_id"], check.table, check.column)
            features, gate = replacement_evidence(check.value, check.similar, column.indexed_values)
            rows.append((features, gate, check.similar[0].value == case["gold_value"], case["gold_value"] is None,
                         case["db_id"]))
            break
    return rows


def fit_logistic(x, y, l2=1.0, iterations=50):
    """Weights of P(y=1) = sigmoid(x @ w), maximum likelihood with an L2 penalty (Newton's method)."""
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + l2 * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def pick_threshold(p, right, absent, absent_total, max_absent_replaced):
    """The threshold with the most right outcomes under the absent constraint; ties go to the higher one."""
    best = (-1, 1.0)
    for t in sorted(set(np.round(p, 6)) | {1.0}):
        replaced = p >= t
        if (replaced & absent).sum() > max_absent_replaced * absent_total:
            continue
        score = int((replaced & right).sum() + (~replaced & absent).sum())
        if score > best[0] or (score == best[0] and t > best[1]):
            best = (score, float(t))
    return best[1]


def fit(x, gated, right, absent, absent_total, l2, budget):
    """(weights, threshold, probabilities) of the rows, gated rows at probability 0."""
    w = fit_logistic(x[~gated], right[~gated].astype(float), l2)
    p = np.where(gated, 0.0, 1 / (1 + np.exp(-(x @ w))))
    return w, pick_threshold(p, right, absent, absent_total, budget), p


def database_group(db, groups, seed=0):
    return int.from_bytes(hashlib.sha256(json.dumps([seed, "cv", db]).encode()).digest()[:8], "little") % groups


def cross_validate(x, gated, right, absent, case_groups, row_groups, groups, l2_grid, budget_grid):
    """Per (l2, budget): right outcomes, absent values replaced and absent values over the held-back groups."""
    results = []
    for l2 in l2_grid:
        for budget in budget_grid:
            total = {"l2": l2, "budget": budget, "right": 0, "absent_replaced": 0, "absent": 0, "wrong_replaced": 0}
            for g in range(groups):
                train, test = row_groups != g, row_groups == g
                w, threshold, _ = fit(x[train], gated[train], right[train], absent[train],
                                      int(sum(a for a, cg in case_groups if cg != g)), l2, budget)
                p = np.where(gated[test], 0.0, 1 / (1 + np.exp(-(x[test] @ w))))
                replaced = p >= threshold
                total["right"] += int((replaced & right[test]).sum() + (~replaced & absent[test]).sum())
                total["wrong_replaced"] += int((replaced & ~right[test] & ~absent[test]).sum())
                total["absent_replaced"] += int((replaced & absent[test]).sum())
                total["absent"] += int(sum(a for a, cg in case_groups if cg == g))
            total["absent_replaced_rate"] = round(total["absent_replaced"] / max(total["absent"], 1), 4)
            results.append(total)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--cases", required=True, help="JSONL cases from scripts/make_value_cases.py")
    parser.add_argument("--memory", default=None, help="a saved value memory instead of building one")
    parser.add_argument("--encoder", default=None, help="encoder spec of the memory built (default: the default "
                                                        "encoder)")
    parser.add_argument("--fold", default="tune")
    parser.add_argument("--l2", type=float, default=0.01, help="with --cross-validate 0")
    parser.add_argument("--max-absent-replaced", type=float, default=0.015,
                        help="share of the fold's absent values the threshold may replace (with --cross-validate 0)")
    parser.add_argument("--cross-validate", type=int, default=5, help="groups of databases (0: no search)")
    parser.add_argument("--l2-grid", default="0.001,0.01,0.1,1")
    parser.add_argument("--budget-grid", default="0.005,0.01,0.015,0.02")
    parser.add_argument("--target-absent-replaced", type=float, default=0.02)
    args = parser.parse_args(argv)

    import relmem
    from relmem.bench.values import load_cases
    from relmem.values import CONFIDENCE_FEATURES, ValueMemory
    catalog = relmem.Catalog(args.dbs)
    memory = ValueMemory.load(args.memory) if args.memory else ValueMemory.build(catalog, encoder=args.encoder)
    cases = [c for c in load_cases(args.cases, fold=args.fold) if c["db_id"] in memory]
    if not cases:
        parser.error(f"no cases of fold {args.fold!r} in {args.cases}")
    rows = case_rows(memory, catalog, cases)
    x = np.array([r[0] for r in rows])
    gated = np.array([bool(r[1]) for r in rows])
    right = np.array([r[2] for r in rows])
    absent = np.array([r[3] for r in rows])
    absent_total = sum(c["gold_value"] is None for c in cases)
    l2, budget, search = args.l2, args.max_absent_replaced, None
    if args.cross_validate > 1:
        groups = args.cross_validate
        case_groups = [(c["gold_value"] is None, database_group(c["db_id"], groups)) for c in cases]
        row_groups = np.array([database_group(r[4], groups) for r in rows])
        search = cross_validate(x, gated, right, absent, case_groups, row_groups, groups,
                                [float(v) for v in args.l2_grid.split(",")],
                                [float(v) for v in args.budget_grid.split(",")])
        allowed = [r for r in search if r["absent_replaced_rate"] <= args.target_absent_replaced] or search
        chosen = max(allowed, key=lambda r: (r["right"], -r["absent_replaced"], -r["budget"], r["l2"]))
        l2, budget = chosen["l2"], chosen["budget"]
    w, threshold, p = fit(x, gated, right, absent, absent_total, l2, budget)
    replaced = p >= threshold
    weights = ", ".join(f"{v:.4f}" for v in w)
    print(f'{{"{memory.encoder.name}", {{{{{weights}}}, {threshold:.4f}}}}},')
    print(json.dumps({
        "fold": args.fold, "l2": l2, "max_absent_replaced": budget, "cross_validation": search,
        "cases": len(cases), "rows": len(rows), "gated": int(gated.sum()),
        "gated_right": int((gated & right).sum()), "threshold": round(threshold, 4),
        "weights": dict(zip(CONFIDENCE_FEATURES, (round(v, 4) for v in w))),
        "right_replaced": int((replaced & right).sum()), "wrong_replaced": int((replaced & ~right & ~absent).sum()),
        "absent_replaced": int((replaced & absent).sum()), "absent_total": absent_total,
    }, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
