"""Recall@10 of int8 codes of Gaussian rows against exact fp32, with one scale per row or per block of values.

A numpy simulation behind docs/index-and-kernels.md's int8 recall figures: python3 scripts/int8_block_scale_recall.py
"""
import argparse

import numpy as np


def quantize(matrix, block):
    blocks = matrix.reshape(matrix.shape[0], -1, block)
    scales = np.abs(blocks).max(axis=2, keepdims=True) / 127
    return (np.round(blocks / scales) * scales).reshape(matrix.shape)


def recall_at_k(exact, approximate, k):
    truth = np.argpartition(-exact, k, axis=1)[:, :k]
    found = np.argpartition(-approximate, k, axis=1)[:, :k]
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(truth, found)]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--blocks", default="512,128,64,32,16", help="values per scale; the dimension is one per row")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((args.rows, args.dim), dtype=np.float32)
    queries = rng.standard_normal((args.queries, args.dim), dtype=np.float32)
    exact = queries @ rows.T
    for block in (int(b) for b in args.blocks.split(",")):
        codes = quantize(rows, block)
        print(f"values per scale {block:4d}: recall@{args.k} {recall_at_k(exact, queries @ codes.T, args.k):.4f} "
              f"(queries quantized too: {recall_at_k(exact, quantize(queries, block) @ codes.T, args.k):.4f})",
              flush=True)


if __name__ == "__main__":
    main()
