"""Which installed GGUF the local LLM opens: $RELMEM_LLM_GGUF, else the default model, else another installed one.
Runs without llama.cpp: only files are read."""
import pytest

from relmem.llm import local

OTHER = "qwen2.5-coder-0.5b-instruct-q4_k_m"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The model folder of an empty $RELMEM_HOME, with $RELMEM_LLM_GGUF unset."""
    monkeypatch.setenv("RELMEM_HOME", str(tmp_path))
    monkeypatch.delenv(local.ENV_GGUF, raising=False)
    return tmp_path / "models" / "llm"


def install(folder, name, marked=True):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.gguf").write_bytes(b"GGUF")
    if marked:
        (folder / f"{name}.gguf.installed").write_text("sha256 4\n")


def test_the_default_model_comes_first_when_several_are_installed(folder):
    install(folder, OTHER)
    install(folder, local.DEFAULT_MODEL)
    assert local.installed_models() == [local.DEFAULT_MODEL, OTHER]
    assert local.default_gguf() == str(folder / f"{local.DEFAULT_MODEL}.gguf")


def test_another_installed_model_serves_when_the_default_is_absent(folder):
    install(folder, OTHER)
    install(folder, local.DEFAULT_MODEL, marked=False)  # not installed by relmem: never chosen
    assert local.installed_models() == [OTHER]
    assert local.default_gguf() == str(folder / f"{OTHER}.gguf")


def test_the_environment_names_the_file(folder, monkeypatch):
    install(folder, local.DEFAULT_MODEL)
    monkeypatch.setenv(local.ENV_GGUF, "/models/any.gguf")
    assert local.default_gguf() == "/models/any.gguf"


def test_nothing_installed_means_no_local_model(folder):
    assert local.installed_models() == [] and local.default_gguf() is None
