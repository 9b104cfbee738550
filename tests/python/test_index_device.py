"""VectorIndex(dim, metric, device=..., dtype=...): CPU defaults, bad arguments, the clear error without CUDA, and
CUDA against CPU results when a GPU is present."""
import numpy as np
import pytest

import relmem

HAVE_GPU = relmem.cuda_device_count() > 0
requires_gpu = pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device")
TOLERANCE = {"fp32": 1e-4, "fp16": 4e-3, "bf16": 3e-2}


def test_cpu_fp32_is_the_default():
    index = relmem.VectorIndex(8)
    assert (index.device, index.dtype) == ("cpu", "fp32")
    assert repr(index) == "VectorIndex(dim=8, metric=cosine, size=0)"
    spelled_out = relmem.VectorIndex(8, "ip", device="cpu", dtype="fp32")
    assert (spelled_out.device, spelled_out.dtype, spelled_out.metric) == ("cpu", "fp32", "ip")


def test_bad_devices_and_dtypes_are_relmem_errors(tmp_path):
    with pytest.raises(relmem.Error, match="unknown device 'tpu'"):
        relmem.VectorIndex(8, device="tpu")
    with pytest.raises(relmem.Error, match="unknown vector dtype 'fp8'"):
        relmem.VectorIndex(8, dtype="fp8")
    with pytest.raises(relmem.Error, match="needs device='cuda'"):
        relmem.VectorIndex(8, device="cpu", dtype="bf16")
    path = str(tmp_path / "index.bin")
    relmem.VectorIndex(4).save(path)
    with pytest.raises(relmem.Error, match="needs device='cuda'"):
        relmem.VectorIndex.load(path, dtype="bf16")
    with pytest.raises(relmem.Error, match="unknown device"):
        relmem.VectorIndex.load(path, device="cuda:one")


def test_device_discovery_is_exported():
    count = relmem.cuda_device_count()
    assert isinstance(count, int) and count >= 0
    if count == 0:
        assert relmem.cuda_unavailable_reason()
        with pytest.raises(relmem.Error):
            relmem.cuda_device_info(0)
    else:
        info = relmem.cuda_device_info(0)
        assert info["name"] and info["memory_bytes"] > 0


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present")
def test_cuda_without_a_device_is_a_clear_error(tmp_path):
    expected = "no usable CUDA device" if relmem.built_with_cuda() else "relmem was built without CUDA"
    for dtype in ("fp32", "fp16", "bf16"):
        with pytest.raises(relmem.Error, match=f"cannot place a VectorIndex on cuda.*{expected}"):
            relmem.VectorIndex(16, device="cuda", dtype=dtype)
    path = str(tmp_path / "index.bin")
    relmem.VectorIndex(4).save(path)
    with pytest.raises(relmem.Error, match=expected):
        relmem.VectorIndex.load(path, device="cuda:0")


@requires_gpu
@pytest.mark.parametrize("metric", ["cosine", "ip"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_cuda_matches_cpu(tmp_path, metric, dtype):
    rng = np.random.default_rng(0)
    dim = 24
    data = rng.standard_normal((800, dim)).astype(np.float32)
    queries = rng.standard_normal((6, dim)).astype(np.float32)
    ids = np.arange(100, 900)
    cpu = relmem.VectorIndex(dim, metric)
    cuda = relmem.VectorIndex(dim, metric, device="cuda", dtype=dtype)
    assert (cuda.device, cuda.dtype) == ("cuda:0", dtype) and "device=cuda:0" in repr(cuda)
    for index in (cpu, cuda):
        index.add(data, ids=ids)
        assert index.remove([150, 151, 7]) == 2
    assert len(cuda) == 798 and 152 in cuda and 150 not in cuda
    tolerance = TOLERANCE[dtype] * (1 if metric == "cosine" else 8)  # inner products of normal vectors run to ~15

    def same(expected, got):
        # top-k up to near-ties: scores agree rank by rank, ids wherever a rank's score is clear of its neighbours'
        np.testing.assert_allclose(got[0], expected[0], atol=tolerance)
        separated = expected[0][:, :-1] - expected[0][:, 1:] > 2 * tolerance
        edge = np.ones((len(separated), 1), dtype=bool)
        clear = np.hstack([edge, separated]) & np.hstack([separated, ~edge])  # the last rank's successor is unknown
        np.testing.assert_array_equal(got[1][clear], expected[1][clear])

    same(cpu.search(queries, 10), cuda.search(queries, 10))
    same(cpu.search(queries, 5, id_range=(300, 500)), cuda.search(queries, 5, id_range=(300, 500)))
    cuda.save(str(tmp_path / "cuda.bin"))
    same(cpu.search(queries, 10), relmem.VectorIndex.load(str(tmp_path / "cuda.bin")).search(queries, 10))
    cpu.save(str(tmp_path / "cpu.bin"))
    onto_cuda = relmem.VectorIndex.load(str(tmp_path / "cpu.bin"), device="cuda", dtype=dtype)
    assert onto_cuda.dtype == dtype
    same(cpu.search(queries, 10), onto_cuda.search(queries, 10))
