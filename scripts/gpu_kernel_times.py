"""Per-kernel GPU times of one search per batch shape on a 1M x 512 fp16 GpuVectorIndex, read by Nsight Compute.

    ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \\
        python3 scripts/gpu_kernel_times.py > times.csv
    python3 scripts/gpu_kernel_times.py --summarize times.csv

Each shape is searched once untimed (warm-up), then once between cudaProfilerStart and cudaProfilerStop.
"""
import csv
import ctypes
import sys

PLAN = [(1, "fused"), (8, "fused"), (64, "fused"), (64, "gemm_select"), (1024, "gemm_select")]


def profile():
    import numpy as np
    from relmem import _relmem
    cudart = ctypes.CDLL("libcudart.so.13")
    rng = np.random.default_rng(0)
    index = _relmem.GpuVectorIndex(512, "cosine", "fp16", 0)
    for first in range(0, 1_000_000, 131072):
        index.add(rng.standard_normal((min(131072, 1_000_000 - first), 512), dtype=np.float32))
    queries = {n: rng.standard_normal((n, 512), dtype=np.float32) for n, _ in PLAN}
    for profiled in (False, True):
        if profiled:
            cudart.cudaProfilerStart()
        for n, algorithm in PLAN:
            index.algorithm = algorithm
            index.search(queries[n], 10)
    cudart.cudaProfilerStop()


def summarize(path):
    rows = list(csv.reader(open(path)))
    start = next(i for i, row in enumerate(rows) if row and row[0] == "ID")
    head = {name: i for i, name in enumerate(rows[start])}
    scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "ns": 1e-3, "us": 1.0, "ms": 1e3}
    for row in rows[start + 1:]:
        if len(row) == len(head) and row[head["Metric Name"]] == "gpu__time_duration.sum":
            us = float(row[head["Metric Value"]].replace(",", "")) * scale[row[head["Metric Unit"]]]
            print(f'{row[head["ID"]]:>4} {us:10.1f} us  {row[head["Kernel Name"]][:70]}')


if __name__ == "__main__":
    summarize(sys.argv[2]) if sys.argv[1:2] == ["--summarize"] else profile()
