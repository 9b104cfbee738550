"""relmem bench similarity and the GpuVectorIndex binding: the CPU path everywhere, a clean error
without a GPU, and GPU-vs-CPU results when a CUDA device is present."""
import argparse
import subprocess
import sys

import numpy as np
import pytest

import relmem
from relmem import _relmem
from relmem.bench import similarity

HAVE_GPU = _relmem.cuda_device_count() > 0


def _args(*argv):
    parser = argparse.ArgumentParser()
    similarity.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_cpu_benchmark_reports_rates_per_batch():
    report = similarity.run(_args("--device", "cpu", "--n", "3000", "--dim", "32", "--queries", "1,16",
                                  "--k", "5", "--repeats", "1"))
    assert report["benchmark"] == "similarity" and report["queries"] == [1, 16]
    results = report["cpu"]["results"]
    assert [r["queries"] for r in results] == [1, 16]
    for r in results:
        assert r["queries_per_s"] > 0 and r["achieved_gbs"] > 0 and r["achieved_tflops"] > 0
        assert r["bandwidth_fraction_of_peak"] is None
    assert "gpu" not in report


def test_bad_arguments_are_relmem_errors():
    with pytest.raises(relmem.Error):
        similarity.run(_args("--device", "cpu", "--queries", "1,x"))
    with pytest.raises(relmem.Error):
        similarity.run(_args("--device", "tpu"))


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_cuda_without_a_device_is_a_clear_error():
    assert _relmem.cuda_unavailable_reason()
    with pytest.raises(relmem.Error, match="CUDA|cuda"):
        similarity.run(_args("--device", "cuda", "--n", "10", "--dim", "4", "--queries", "1"))
    with pytest.raises(relmem.Error):
        _relmem.GpuVectorIndex(8)


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_cuda_without_a_device_exits_cleanly_from_the_command_line():
    done = subprocess.run([sys.executable, "-m", "relmem.cli", "bench", "similarity", "--device", "cuda",
                           "--n", "10", "--dim", "4", "--queries", "1"], capture_output=True, text=True)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "CUDA" in done.stderr


@pytest.mark.skipif(not HAVE_GPU, reason="needs a CUDA device")
def test_gpu_index_matches_cpu_index():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((5000, 40)).astype(np.float32)
    queries = rng.standard_normal((70, 40)).astype(np.float32)
    cpu = relmem.VectorIndex(40)
    cpu.add(data)
    expected_scores, expected_ids = cpu.search(queries, 10)
    for dtype, tolerance in (("fp32", 1e-4), ("fp16", 4e-3), ("bf16", 3e-2)):
        gpu = _relmem.GpuVectorIndex(40, "cosine", dtype)
        gpu.add(data)
        assert len(gpu) == 5000 and gpu.dtype == dtype
        for algorithm in ("fused", "gemm_select", "gemm_sort"):
            gpu.algorithm = algorithm
            scores, ids = gpu.search(queries, 10)
            np.testing.assert_allclose(scores, expected_scores, atol=tolerance)
            overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, expected_ids)])
            assert overlap > (0.999 if dtype == "fp32" else 0.95), (dtype, algorithm, overlap)


@pytest.mark.skipif(not HAVE_GPU, reason="needs a CUDA device")
def test_gpu_benchmark_reports_every_algorithm():
    report = similarity.run(_args("--n", "20000", "--dim", "64", "--queries", "1,100", "--k", "10",
                                  "--repeats", "1"))
    results = report["gpu"]["results"]
    assert {(r["queries"], r["algorithm"]) for r in results} == {
        (q, a) for q in (1, 100) for a in ("fused", "gemm_select", "gemm_sort")}
    assert all(r["agreement_with_cpu"] > 0.9 for r in results)
    assert report["gpu"]["peak"]["memory_bandwidth_gbs"] > 0
