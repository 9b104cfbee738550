import numpy as np
import pytest

import relmem


def _brute_force(data, queries, k):
    d = data / np.linalg.norm(data, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    return np.argsort(-(q @ d.T), axis=1, kind="stable")[:, :k]


def test_search_matches_numpy():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3000, 32)).astype(np.float32)
    queries = rng.standard_normal((10, 32)).astype(np.float32)
    index = relmem.VectorIndex(32)
    index.add(data)
    scores, ids = index.search(queries, 7)
    assert scores.shape == ids.shape == (10, 7)
    assert scores.dtype == np.float32 and ids.dtype == np.int64
    np.testing.assert_array_equal(ids, _brute_force(data, queries, 7))
    assert len(index) == 3000 and index.dim == 32 and index.metric == "cosine"


def test_ids_remove_range_save_load(tmp_path):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((100, 8)).astype(np.float64)  # converted to float32
    index = relmem.VectorIndex(8, metric="ip")
    index.add(data, ids=np.arange(500, 600))
    assert 550 in index
    assert index.remove([550, 1]) == 1
    _, ids = index.search(data[50], 1)
    assert ids[0, 0] != 550
    _, ranged = index.search(data[:2], 5, id_range=(500, 510))
    assert ((ranged >= 500) & (ranged < 510)).all()
    index.save(str(tmp_path / "i.bin"))
    loaded = relmem.VectorIndex.load(str(tmp_path / "i.bin"))
    assert len(loaded) == 99 and loaded.metric == "ip"
    np.testing.assert_array_equal(loaded.search(data, 3)[1], index.search(data, 3)[1])
    np.testing.assert_allclose(loaded.reconstruct(501), data[1].astype(np.float32))


def test_bad_input(tmp_path):
    index = relmem.VectorIndex(4)
    with pytest.raises(relmem.Error, match="shape"):
        index.add(np.zeros((2, 5), dtype=np.float32))
    with pytest.raises(relmem.Error, match="NaN"):
        index.add(np.full((1, 4), np.nan, dtype=np.float32))
    with pytest.raises(relmem.Error, match="unknown metric"):
        relmem.VectorIndex(4, metric="l7")
    (tmp_path / "bad.bin").write_bytes(b"RMVI" + b"\0" * 40)
    with pytest.raises(relmem.Error):
        relmem.VectorIndex.load(str(tmp_path / "bad.bin"))
    scores, ids = index.search(np.ones(4, dtype=np.float32), 3)  # empty index: padding only
    assert (ids == -1).all() and np.isneginf(scores).all()
