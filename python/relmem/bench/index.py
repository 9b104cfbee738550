"""VectorIndex exact top-k against numpy brute force (argpartition), measured in the same run."""
import time

import numpy as np

from .. import VectorIndex


def add_arguments(parser):
    parser.add_argument("--n", type=int, default=100_000, help="stored vectors")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", type=int, default=256, help="queries per batch")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5, help="timed batches (after one warm-up)")
    parser.add_argument("--seed", type=int, default=0)


def _timed(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, float(np.median(times))


def _numpy_top_k(vectors, queries, k):
    scores = queries @ vectors.T
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-part_scores, axis=1, kind="stable")
    return np.take_along_axis(part_scores, order, axis=1), np.take_along_axis(part, order, axis=1)


def run(args):
    rng = np.random.default_rng(args.seed)
    vectors = rng.standard_normal((args.n, args.dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = rng.standard_normal((args.queries, args.dim), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    index = VectorIndex(args.dim, "ip")
    start = time.perf_counter()
    index.add(vectors)
    add_seconds = time.perf_counter() - start

    (scores, ids), relmem_s = _timed(lambda: index.search(queries, args.k), args.repeats)
    (np_scores, np_ids), numpy_s = _timed(lambda: _numpy_top_k(vectors, queries, args.k), args.repeats)
    agreement = float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ids, np_ids)]))

    return {
        "benchmark": "index",
        "n": args.n, "dim": args.dim, "queries": args.queries, "k": args.k, "repeats": args.repeats,
        "relmem": {"ms_per_batch": relmem_s * 1e3, "queries_per_s": args.queries / relmem_s},
        "numpy_argpartition": {"ms_per_batch": numpy_s * 1e3, "queries_per_s": args.queries / numpy_s},
        "speedup_vs_numpy": numpy_s / relmem_s,
        "add_ms": add_seconds * 1e3,
        "top_k_agreement_with_numpy": agreement,
    }
