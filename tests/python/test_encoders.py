import numpy as np
import pytest

import relmem


def test_hashing_encoder_encode_list():
    encoder = relmem.HashingEncoder(dim=128)
    vectors = encoder.encode(["How many singers?", "", "Zürich 東京"])
    assert vectors.shape == (3, 128) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[[0, 2]], axis=1), 1.0, rtol=1e-5)
    assert encoder.dim == 128 and encoder.name == "hashing:128"


def test_load_encoder_by_name():
    assert relmem.load_encoder("hashing:64").dim == 64
    with pytest.raises(relmem.Error, match="unknown encoder"):
        relmem.load_encoder("nope")


def test_default_falls_back_to_hashing_with_a_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("RELMEM_USE_LITE_DIR", str(tmp_path / "absent"))
    with pytest.warns(UserWarning, match="hashing"):
        encoder = relmem.load_encoder()
    assert encoder.name.startswith("hashing")
