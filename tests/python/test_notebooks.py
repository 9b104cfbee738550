"""Every notebook in notebooks/ executes headless without errors, leaves no temporary files, and is committed executed
(`make notebooks`)."""
import pathlib

import pytest
from conftest import NO_HTTP

import relmem.llm

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("RELMEM_NOTEBOOK_SMALL", "1")  # notebooks use small subsets under test
    monkeypatch.setenv("MPLBACKEND", "Agg")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the kernel's temporary folders
    if "FakeLLMServer" in path.read_text() and not relmem.llm.built_with_http():
        pytest.skip(NO_HTTP)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    left = sorted(p.name for p in scratch.iterdir())
    assert not left, f"{path.name} left {left} in the temporary folder"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_with_its_outputs(path):
    nbformat = pytest.importorskip("nbformat")
    code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    unexecuted = [i for i, cell in enumerate(code) if cell.execution_count is None]
    assert not unexecuted, f"{path.name}: code cells {unexecuted} were never run; run `make notebooks` and commit"
    errors = [i for i, cell in enumerate(code) for out in cell.outputs if out.output_type == "error"]
    assert not errors, f"{path.name}: code cells {errors} end in an error"
