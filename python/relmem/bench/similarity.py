"""Exact top-k similarity search at scale: the CUDA kernels (fused scan, cuBLAS GEMM + tile selection)
against the baselines cuBLAS GEMM + CUB segmented sort and the CPU VectorIndex, all in one run.

Reports per batch size: queries/s, achieved memory bandwidth (stored vectors read once per batch) and
TFLOP/s (2 * n * dim * queries per batch), and their fraction of the device's peak: bandwidth from the
device's memory clock and bus width, compute from a table of known GPUs (dense fp16/bf16 tensor-core
peak with fp32 accumulation for fp16/bf16 indexes, fp32 CUDA-core peak for fp32 indexes).
"""
import time

import numpy as np

from .. import _relmem
from .._relmem import Error, VectorIndex

# Dense peaks in TFLOP/s from NVIDIA's datasheets: (fp16/bf16 tensor cores with fp32 accumulation,
# fp32 CUDA cores). Matched against the device name in this order, first match wins.
_PEAK_TFLOPS = [
    ("H100 PCIe", 756.5, 51.2),
    ("H100 NVL", 835.5, 60.0),
    ("H100", 989.4, 66.9),
    ("H200", 989.4, 66.9),
    ("GH200", 989.4, 66.9),
    ("A100", 312.0, 19.5),
    ("L40S", 362.1, 91.6),
    ("L40", 181.0, 90.5),
    ("L4", 121.0, 30.3),
    ("A10", 125.0, 31.2),
    ("RTX 4090", 165.2, 82.6),
    ("V100", 125.0, 15.7),
    ("T4", 65.0, 8.1),
]

_GPU_ALGORITHMS = ("fused", "gemm_select", "gemm_sort")


def add_arguments(parser):
    parser.add_argument("--n", type=int, default=1_000_000, help="stored vectors")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--queries", default="1,8,64,1024,8192", help="batch sizes, comma separated")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--dtype", default="fp16", choices=["fp32", "fp16", "bf16"], help="GPU storage precision")
    parser.add_argument("--metric", default="cosine", choices=["cosine", "ip"])
    parser.add_argument("--algorithms", default=",".join(_GPU_ALGORITHMS),
                        help="GPU search paths to time: fused, fused_simt, gemm_select, gemm_sort, auto")
    parser.add_argument("--cpu-max-queries", type=int, default=1024,
                        help="largest batch also timed on the CPU VectorIndex (and used to check agreement)")
    parser.add_argument("--repeats", type=int, default=5, help="timed batches per measurement (after one warm-up)")
    parser.add_argument("--seed", type=int, default=0)


def _parse_batches(text):
    try:
        batches = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise Error(f"--queries must be a comma-separated list of integers, got '{text}'") from None
    if not batches or min(batches) < 1:
        raise Error(f"--queries needs positive batch sizes, got '{text}'")
    return batches


def _parse_device(text):
    if text == "cpu":
        return None
    if text == "cuda":
        return 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    raise Error(f"unknown device '{text}' (expected cpu, cuda or cuda:N)")


def _median_seconds(fn, repeats):
    fn()  # warm-up: first-call allocations and kernel loading are not part of the figure
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _peak_tflops(name, dtype):
    for key, tensor, fp32 in _PEAK_TFLOPS:
        if key in name:
            kind = "fp32 CUDA cores" if dtype == "fp32" else "fp16/bf16 tensor cores, fp32 accumulate"
            return (fp32 if dtype == "fp32" else tensor), f"{key} datasheet, dense, {kind}"
    return None, f"no peak table entry for '{name}'"


def _agreement(ids, reference_ids):
    k = ids.shape[1]
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(ids, reference_ids)]))


def _build_indexes(args, gpu_device, batches):
    """Adds the same random vectors, chunk by chunk, to the GPU index and (when needed) the CPU one."""
    rng = np.random.default_rng(args.seed)
    gpu = None
    if gpu_device is not None:
        gpu = _relmem.GpuVectorIndex(args.dim, args.metric, args.dtype, gpu_device)
    need_cpu = gpu is None or min(batches) <= args.cpu_max_queries
    cpu = VectorIndex(args.dim, args.metric) if need_cpu else None
    gpu_seconds = cpu_seconds = 0.0
    chunk = max(1, (64 << 20) // (4 * args.dim))
    for first in range(0, args.n, chunk):
        block = rng.standard_normal((min(chunk, args.n - first), args.dim), dtype=np.float32)
        if gpu is not None:
            start = time.perf_counter()
            gpu.add(block)
            gpu_seconds += time.perf_counter() - start
        if cpu is not None:
            start = time.perf_counter()
            cpu.add(block)
            cpu_seconds += time.perf_counter() - start
    return gpu, cpu, gpu_seconds, cpu_seconds


def _rates(args, seconds, batch, element_bytes, peak_gbs, peak_tflops):
    gbs = args.n * args.dim * element_bytes / seconds / 1e9
    tflops = 2.0 * args.n * args.dim * batch / seconds / 1e12
    return {
        "ms_per_batch": seconds * 1e3,
        "queries_per_s": batch / seconds,
        "achieved_gbs": gbs,
        "achieved_tflops": tflops,
        "bandwidth_fraction_of_peak": gbs / peak_gbs if peak_gbs else None,
        "compute_fraction_of_peak": tflops / peak_tflops if peak_tflops else None,
    }


def run(args):
    batches = _parse_batches(args.queries)
    gpu_device = _parse_device(args.device)
    if args.n < 1 or args.dim < 1 or args.k < 1:
        raise Error("--n, --dim and --k must be positive")
    algorithms = [a for a in args.algorithms.split(",") if a]
    if gpu_device is not None:
        if _relmem.cuda_device_count() == 0:
            raise Error("similarity benchmark on CUDA: " + _relmem.cuda_unavailable_reason() +
                        " (use --device cpu to time the CPU path only)")
        info = _relmem.cuda_device_info(gpu_device)
    rng = np.random.default_rng(args.seed + 1)
    gpu, cpu, gpu_add_s, cpu_add_s = _build_indexes(args, gpu_device, batches)

    report = {
        "benchmark": "similarity",
        "n": args.n, "dim": args.dim, "k": args.k, "metric": args.metric, "queries": batches,
        "repeats": args.repeats, "seed": args.seed,
    }
    cpu_results = {}
    cpu_ids = {}
    query_sets = {batch: rng.standard_normal((batch, args.dim), dtype=np.float32) for batch in batches}
    if cpu is not None:
        report["cpu"] = {"add_seconds": cpu_add_s, "dtype": "fp32", "results": []}
        for batch in batches:
            if gpu is not None and batch > args.cpu_max_queries:
                continue
            queries = query_sets[batch]
            seconds = _median_seconds(lambda: cpu.search(queries, args.k), args.repeats)
            cpu_ids[batch] = cpu.search(queries, args.k)[1]
            cpu_results[batch] = seconds
            report["cpu"]["results"].append({"queries": batch, **_rates(args, seconds, batch, 4, None, None)})

    if gpu is not None:
        element_bytes = 4 if args.dtype == "fp32" else 2
        peak_tflops, peak_source = _peak_tflops(info["name"], args.dtype)
        peak_gbs = info["peak_memory_bandwidth_gbs"] or None
        report["gpu"] = {
            "device": info, "dtype": args.dtype, "add_seconds": gpu_add_s,
            "index_bytes": args.n * args.dim * element_bytes,
            "peak": {"memory_bandwidth_gbs": peak_gbs, "tflops": peak_tflops, "tflops_source": peak_source},
            "auto_uses_fused_up_to_queries": _relmem.GPU_FUSED_MAX_QUERIES,
            "auto_uses_streaming_fused_up_to_queries": _relmem.GPU_STREAM_FUSED_MAX_QUERIES,
            "results": [],
        }
        for batch in batches:
            queries = query_sets[batch]
            for algorithm in algorithms:
                gpu.algorithm = algorithm
                entry = {"queries": batch, "algorithm": algorithm}
                seconds = _median_seconds(lambda: gpu.search(queries, args.k), args.repeats)
                entry.update(_rates(args, seconds, batch, element_bytes, peak_gbs, peak_tflops))
                if batch in cpu_ids:
                    entry["agreement_with_cpu"] = _agreement(gpu.search(queries, args.k)[1], cpu_ids[batch])
                    entry["speedup_vs_cpu"] = cpu_results[batch] / seconds
                report["gpu"]["results"].append(entry)
        gpu.algorithm = "auto"
    return report
