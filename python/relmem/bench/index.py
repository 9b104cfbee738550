"""VectorIndex top-k against numpy brute force (matrix product + argpartition) and, when `import faiss` works,
FAISS's IndexFlatIP, interleaved in one run: every repeat times each contender once in turn, and each figure is the
median of its repeats, so a load change on the host hits all of them alike. The same run measures numpy's sgemv
(matrix-vector product over the same fp32 matrix) as the memory bandwidth reference for the scan's GB/s."""
import os
import time

import numpy as np

from .. import VectorIndex


def add_arguments(parser):
    parser.add_argument("--n", type=int, default=100_000, help="stored vectors")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", default="1,8,256", help="queries per batch, comma-separated")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--dtype", default="fp32", help="relmem storage types, comma-separated: fp32,fp16,int8")
    parser.add_argument("--rerank", type=int, default=0,
                        help="also measure compact dtypes re-ranking their top RERANK candidates in fp32")
    parser.add_argument("--compare", default="", help="'faiss' adds FAISS IndexFlatIP (skipped when not importable)")
    parser.add_argument("--repeats", type=int, default=7, help="timed rounds (after one warm-up round)")
    parser.add_argument("--recall-queries", type=int, default=200,
                        help="queries the recall is measured over (untimed, searched a batch at a time)")
    parser.add_argument("--texts", default=None,
                        help="store sentence-encoder vectors of real texts instead of random Gaussian ones: a file of "
                             "one text a line, its first lines the queries (--recall-queries or the largest batch), "
                             "the rest the stored rows (at most --n); --dim is the encoder's")
    parser.add_argument("--encoder", default="use-lite", help="with --texts: encoder spec, as for relmem.load_encoder")
    parser.add_argument("--seed", type=int, default=0)


def _numpy_top_k(vectors, queries, k):
    scores = queries @ vectors.T
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-part_scores, axis=1, kind="stable")
    return np.take_along_axis(part_scores, order, axis=1), np.take_along_axis(part, order, axis=1)


def _interleaved(contenders, repeats):
    """contenders: name -> fn. Returns name -> (last result, median seconds, every run's seconds)."""
    results = {name: fn() for name, fn in contenders.items()}  # warm-up round
    times = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - start)
    return {name: (results[name], float(np.median(times[name])), times[name]) for name in contenders}


def _batched(search, queries, batch, k):
    """The ids search(queries, k) finds, asking `batch` queries at a time."""
    return np.concatenate([search(np.ascontiguousarray(queries[i:i + batch]), k)[1]
                           for i in range(0, len(queries), batch)])


def _recall(ids, reference_ids, k):
    return float(np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(ids, reference_ids)]))


def _faiss():
    try:
        import faiss
    except ImportError:
        return None
    return faiss


def _unit_rows(m):
    return (m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def _vectors(args, n_queries):
    """(stored rows, queries, what they are): random Gaussian, or the encoder's vectors of --texts."""
    if args.texts is None:
        rng = np.random.default_rng(args.seed)
        vectors = rng.standard_normal((args.n, args.dim), dtype=np.float32)
        queries = rng.standard_normal((n_queries, args.dim), dtype=np.float32)
        return _unit_rows(vectors), _unit_rows(queries), "gaussian"
    from ..encoders import load_encoder
    with open(args.texts, encoding="utf-8") as f:
        texts = [line.strip() for line in f if line.strip()]
    if len(texts) <= n_queries:
        raise SystemExit(f"--texts {args.texts}: {len(texts)} texts, need more than the {n_queries} queries")
    encoder = load_encoder(args.encoder)
    texts = texts[:n_queries + args.n]
    encoded = np.concatenate([encoder.encode(texts[i:i + 256]) for i in range(0, len(texts), 256)])
    args.n, args.dim = len(texts) - n_queries, encoder.dim
    return _unit_rows(encoded[n_queries:]), _unit_rows(encoded[:n_queries]), f"{encoder.name} of {args.texts}"


def run(args):
    batches = [int(q) for q in str(args.queries).split(",")]
    vectors, queries, vectors_kind = _vectors(args, max(batches + [args.recall_queries]))
    dtypes = [d for d in args.dtype.split(",") if d]

    indexes = {}
    add_ms = {}
    for dtype in dtypes:
        variants = [(dtype, 0)] + ([(f"{dtype}+rerank{args.rerank}", args.rerank)] if args.rerank and dtype != "fp32" else [])
        for name, rerank in variants:
            index = VectorIndex(args.dim, "ip", dtype=dtype, rerank=rerank)
            start = time.perf_counter()
            index.add(vectors)
            add_ms[name] = (time.perf_counter() - start) * 1e3
            indexes[name] = index

    faiss = _faiss() if args.compare == "faiss" else None
    faiss_index = None
    if faiss is not None:
        faiss_index = faiss.IndexFlatIP(args.dim)
        faiss_index.add(vectors)

    # sgemv: one matrix-vector product over the same fp32 matrix, timed in the first round of contenders.
    query = queries[0].copy()
    report = {
        "benchmark": "index", "vectors": vectors_kind, "n": args.n, "dim": args.dim, "k": args.k,
        "repeats": args.repeats,
        "threads": os.cpu_count(), "load_average_before": list(os.getloadavg()),
        "numpy_blas": _blas_name(),
        "faiss": None if faiss is None else faiss.__version__,
        "add_ms": add_ms, "batches": {},
    }
    if args.compare == "faiss" and faiss is None:
        report["faiss_skipped"] = "import faiss failed (Debian: apt-get install python3-faiss)"
    fp32_bytes = args.n * args.dim * 4
    for batch in batches:
        q = np.ascontiguousarray(queries[:batch])
        contenders = {"numpy": lambda q=q: _numpy_top_k(vectors, q, args.k), "sgemv": lambda: vectors @ query}
        if faiss_index is not None:
            contenders["faiss"] = lambda q=q: faiss_index.search(q, args.k)
        for name, index in indexes.items():
            contenders[name] = lambda q=q, index=index: index.search(q, args.k)
        timed = _interleaved(contenders, args.repeats)
        # Recall over many queries, not only the timed batch's (one query's recall@10 moves in steps of 0.1).
        recall_queries = queries[:max(batch, args.recall_queries)]
        recall_reference = _numpy_top_k(vectors, recall_queries, args.k)[1]
        numpy_s = timed["numpy"][1]
        sgemv_gb_s = fp32_bytes / timed["sgemv"][1] / 1e9
        entry = {
            "recall_queries": len(recall_queries),
            "numpy_ms": numpy_s * 1e3,
            "sgemv_ms": timed["sgemv"][1] * 1e3, "sgemv_gb_per_s": sgemv_gb_s,
            "runs_ms": {name: [round(t * 1e3, 3) for t in runs] for name, (_, _, runs) in timed.items()},
        }
        if faiss_index is not None:
            entry["faiss_ms"] = timed["faiss"][1] * 1e3
            entry["faiss_recall_vs_numpy"] = _recall(_batched(faiss_index.search, recall_queries, batch, args.k),
                                                     recall_reference, args.k)
        for name, index in indexes.items():
            seconds = timed[name][1]
            row_bytes = args.dim * {"fp32": 4, "fp16": 2, "int8": 1}[index.dtype] + (4 if index.dtype == "int8" else 0)
            gb_per_s = args.n * row_bytes / seconds / 1e9
            result = {
                "ms": seconds * 1e3, "queries_per_s": batch / seconds,
                "speedup_vs_numpy": numpy_s / seconds,
                "gb_per_s": gb_per_s, "fraction_of_sgemv_gb_per_s": gb_per_s / sgemv_gb_s,
                f"recall@{args.k}_vs_exact_fp32": _recall(_batched(index.search, recall_queries, batch, args.k),
                                                          recall_reference, args.k),
            }
            if faiss_index is not None:
                result["speedup_vs_faiss"] = timed["faiss"][1] / seconds
            entry[name] = result
        report["batches"][str(batch)] = entry
    report["load_average_after"] = list(os.getloadavg())
    return report


def _blas_name():
    """The BLAS library numpy's libblas.so.3 resolves to on Debian (reference BLAS or OpenBLAS)."""
    path = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
    return os.path.realpath(path) if os.path.exists(path) else "unknown"
