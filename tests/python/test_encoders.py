import re

import numpy as np
import pytest

import relmem
from relmem import encoders


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


def test_as_encoder_reads_a_spec_an_encoder_or_none():
    encoder = relmem.HashingEncoder(32)
    assert encoders.as_encoder(encoder) is encoder
    assert encoders.as_encoder("hashing:64").dim == 64
    assert encoders.as_encoder(None, "hashing:128").dim == 128
    with pytest.raises(TypeError, match="not int"):
        encoders.as_encoder(42)
    with pytest.raises(relmem.Error, match="unknown encoder"):
        encoders.as_encoder("nope")


def test_default_falls_back_to_hashing_with_a_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("RELMEM_HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("RELMEM_USE_LITE_DIR", str(tmp_path / "absent"))
    with pytest.warns(UserWarning, match="MiniLM is not installed .*using the lexical hashing encoder"):
        encoder = relmem.load_encoder()
    assert encoder.name.startswith("hashing")


def test_default_is_minilm_then_use_lite_then_hashing(monkeypatch, tmp_path):
    home = tmp_path / "home"
    monkeypatch.setenv("RELMEM_HOME", str(home))
    monkeypatch.delenv("RELMEM_USE_LITE_DIR", raising=False)
    assert encoders.default_encoder_name() == "hashing"
    fake_use_lite(home / "models" / "use-lite")
    assert encoders.default_encoder_name() == "use-lite"
    with pytest.warns(UserWarning, match="MiniLM is not installed .*using USE-lite"), \
            pytest.raises(relmem.Error, match="use-lite"):  # the fake folder holds no weights
        relmem.load_encoder()
    minilm = home / "models" / "minilm"
    minilm.mkdir(parents=True)
    (minilm / "INSTALLED").write_text("")
    assert encoders.installed_model_dir("minilm") == str(minilm)
    assert encoders.default_encoder_name() == "minilm"


def fake_use_lite(folder):
    """A folder that looks installed (model.json) but holds no weights, so loading it fails naming the folder."""
    folder.mkdir(parents=True)
    (folder / "model.json").write_text("{}")
    return folder


def test_relmem_home_decides_where_python_and_cpp_look_for_use_lite(monkeypatch, tmp_path):
    home = tmp_path / "home"
    monkeypatch.delenv("RELMEM_USE_LITE_DIR", raising=False)
    monkeypatch.setenv("RELMEM_HOME", str(home))
    # The default cache under $HOME is not searched once RELMEM_HOME names another home.
    fake_use_lite(tmp_path / "user" / ".cache" / "relmem" / "models" / "use-lite")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert encoders.relmem_home() == str(home)
    assert relmem._relmem.use_lite_search_path() == [str(home / "models" / "use-lite")]
    assert encoders.use_lite_dir() is None and not encoders.use_lite_installed()
    with pytest.raises(relmem.Error, match=re.escape(f"looked in: {home / 'models' / 'use-lite'})")):
        relmem.load_encoder("use-lite")

    installed = fake_use_lite(home / "models" / "use-lite")
    assert encoders.use_lite_dir() == str(installed) and encoders.use_lite_installed()
    with pytest.raises(relmem.Error, match=re.escape(str(installed))):  # the C++ encoder opens the same folder
        relmem.load_encoder("use-lite")


def test_use_lite_dir_variable_comes_before_relmem_home(monkeypatch, tmp_path):
    monkeypatch.setenv("RELMEM_HOME", str(tmp_path / "home"))
    fake_use_lite(tmp_path / "home" / "models" / "use-lite")
    chosen = fake_use_lite(tmp_path / "elsewhere")
    monkeypatch.setenv("RELMEM_USE_LITE_DIR", str(chosen))
    assert relmem._relmem.use_lite_search_path() == [str(chosen), str(tmp_path / "home" / "models" / "use-lite")]
    assert encoders.use_lite_dir() == str(chosen)
    with pytest.raises(relmem.Error, match=re.escape(str(chosen))):
        relmem.load_encoder("use-lite")


def test_relmem_home_defaults_to_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("RELMEM_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert encoders.relmem_home() == str(tmp_path / ".cache" / "relmem")


def test_minilm_is_looked_for_in_relmem_home_only(monkeypatch, tmp_path):
    monkeypatch.setenv("RELMEM_HOME", str(tmp_path / "empty-home"))
    assert encoders.installed_model_dir("minilm") is None
    with pytest.raises(relmem.Error, match=re.escape(f"not installed in {tmp_path / 'empty-home'}/models/minilm")):
        relmem.load_encoder("minilm")
    # A folder without the installer's INSTALLED file is an interrupted install, not a model.
    (tmp_path / "empty-home" / "models" / "minilm").mkdir(parents=True)
    assert encoders.installed_model_dir("minilm") is None
