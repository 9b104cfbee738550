"""VectorIndex's compact CPU stores from Python: fp16/int8 against exact fp32, rerank, mmap loading, verify."""
import numpy as np
import pytest

import relmem


def unit_rows(n, dim, seed):
    rows = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", ["fp16", "int8"])
def test_compact_scores_stay_near_exact_fp32(dtype):
    data, queries = unit_rows(3000, 96, 0), unit_rows(12, 96, 1)
    index = relmem.VectorIndex(96, "cosine", dtype=dtype)
    index.add(data)
    assert index.dtype == dtype and f"dtype={dtype}" in repr(index)
    scores, ids = index.search(queries, 10)
    exact = np.einsum("qd,qkd->qk", queries, data[ids])
    # int8: half a step of max|row| / 127 per value; fp16: 2^-11 of each value.
    bound = np.abs(queries).sum(axis=1, keepdims=True) / 254 if dtype == "int8" else 1e-3
    assert np.all(np.abs(scores - exact) <= bound)
    fp32 = relmem.VectorIndex(96)
    fp32.add(data)
    assert index.memory_bytes() < fp32.memory_bytes() * (0.3 if dtype == "int8" else 0.55)


def test_rerank_gives_the_exact_top_k():
    data, queries = unit_rows(5000, 64, 2), unit_rows(16, 64, 3)
    index = relmem.VectorIndex(64, "cosine", dtype="int8", rerank=100)
    index.add(data)
    assert index.rerank == 100
    scores, ids = index.search(queries, 10)
    exact_ids = np.argsort(-(queries @ data.T), axis=1)[:, :10]
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, exact_ids)]) >= 0.99
    np.testing.assert_allclose(scores, np.einsum("qd,qkd->qk", queries, data[ids]), atol=1e-5)
    with pytest.raises(relmem.Error, match="rerank must be >= 0"):
        relmem.VectorIndex(8, dtype="int8", rerank=-1)


def test_int8_batches_above_the_scan_limit_stay_within_both_roundings():
    # Above 32 queries an int8 index on a VNNI CPU quantizes the queries to u8 too: each score is within the rows'
    # rounding plus the queries' (half a step of the query's range / 255 per value); rerank restores exact scores.
    data, queries = unit_rows(4000, 100, 6), unit_rows(64, 100, 7)
    index = relmem.VectorIndex(100, "ip", dtype="int8")
    index.add(data)
    scores, ids = index.search(queries, 10)
    rows = data[ids]
    row_step = np.abs(rows).max(axis=2) / 127
    query_step = (np.maximum(queries.max(axis=1), 0) - np.minimum(queries.min(axis=1), 0)) / 255
    bound = (np.abs(queries).sum(axis=1, keepdims=True) * row_step / 2
             + query_step[:, None] / 2 * (np.abs(rows).sum(axis=2) + 100 * row_step / 2) + 1e-4)
    assert np.all(np.abs(scores - np.einsum("qd,qkd->qk", queries, rows)) <= bound)
    reranked = relmem.VectorIndex(100, "ip", dtype="int8", rerank=100)
    reranked.add(data)
    scores, ids = reranked.search(queries, 10)
    np.testing.assert_allclose(scores, np.einsum("qd,qkd->qk", queries, data[ids]), atol=1e-5)
    exact_ids = np.argsort(-(queries @ data.T), axis=1)[:, :10]
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, exact_ids)]) >= 0.99


def test_mapped_load_answers_like_a_full_load_and_damage_is_caught(tmp_path):
    data, queries = unit_rows(6000, 64, 4), unit_rows(4, 64, 5)
    index = relmem.VectorIndex(64, "ip", dtype="int8")
    index.add(data)
    path = str(tmp_path / "index.bin")
    index.save(path)
    mapped = relmem.VectorIndex.load(path, mmap=True)
    assert mapped.mapped and not relmem.VectorIndex.load(path).mapped
    for a, b in zip(index.search(queries, 5), mapped.search(queries, 5)):
        np.testing.assert_array_equal(a, b)
    assert mapped.memory_bytes() < 6000 * 64 // 4
    relmem.VectorIndex.verify(path)
    damaged = bytearray(open(path, "rb").read())
    damaged[-100] ^= 1
    (tmp_path / "damaged.bin").write_bytes(bytes(damaged))
    with pytest.raises(relmem.Error, match="checksum mismatch"):
        relmem.VectorIndex.verify(str(tmp_path / "damaged.bin"))
    with pytest.raises(relmem.Error, match="checksum mismatch"):
        relmem.VectorIndex.load(str(tmp_path / "damaged.bin"))
