import importlib.util
import os
import pathlib
import sqlite3

import pytest
from fake_llm_server import NO_HTTP

import relmem.llm

# The tests choose their LLM themselves: the local model never stands in for "no LLM configured". A GGUF the user
# names is kept for the real-generation tests (tests/python/test_local_llm.py).
os.environ[relmem.llm.ENV_LOCAL] = "0"
USER_GGUF = os.environ.pop("RELMEM_LLM_GGUF", None)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SPIDER = SHARED / "data" / "spider"


def load_script(name):
    """scripts/NAME.py as a module (the scripts are not part of the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def requires_shared(path):
    """Skip marker for tests that read ../shared (absent outside this workplace)."""
    return pytest.mark.skipif(not path.exists(), reason=f"{path} is absent")


requires_http = pytest.mark.skipif(not relmem.llm.built_with_http(), reason=NO_HTTP)


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    from relmem.demo.collection import build_collection
    folder = tmp_path_factory.mktemp("demo")
    build_collection(str(folder))
    return folder


@pytest.fixture
def concert_db(tmp_path):
    path = tmp_path / "concert.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT, city TEXT, capacity INT);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year INTEGER,
                              stadium_id INTEGER REFERENCES stadium(stadium_id));
        INSERT INTO stadium VALUES (1, 'Raith Rovers', 'LA', 10104), (2, 'Ayr United', 'SF', 11998);
        INSERT INTO concert VALUES (1, 'Auditions', 2014, 1), (2, 'Super bootcamp', 2014, 2);
    """)
    db.commit()
    db.close()
    return path


@pytest.fixture(autouse=True)
def _isolated_relmem_home(tmp_path_factory, monkeypatch):
    """Tests never write into the user's cache, but still see installed models."""
    home = os.environ.get("RELMEM_HOME", os.path.join(os.path.expanduser("~"), ".cache", "relmem"))
    models = os.path.join(home, "models", "use-lite")
    if os.path.isdir(models) and "RELMEM_USE_LITE_DIR" not in os.environ:
        monkeypatch.setenv("RELMEM_USE_LITE_DIR", models)
    isolated = tmp_path_factory.mktemp("relmem-home")  # beside the test's tmp_path, whose listing stays its own
    for name in ("minilm", "llm"):
        installed = os.path.join(home, "models", name)
        if os.path.isdir(installed):
            (isolated / "models").mkdir(parents=True, exist_ok=True)
            (isolated / "models" / name).symlink_to(installed)
    monkeypatch.setenv("RELMEM_HOME", str(isolated))
