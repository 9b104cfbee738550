"""The Python package's core (everything but cli.py, eval/, bench/ and demo/) imports none of the evaluation code:
relmem.eval (with the gold simulator), relmem.bench, or the C++ evaluation tools' bindings (relmem._relmem.evaluation).
Imports are read from each module's syntax tree, relative ones resolved, import_module("...") calls included."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "relmem"
OUTSIDE_THE_CORE = ("cli.py", "eval", "bench", "demo")
EVALUATION = ("relmem.eval", "relmem.bench", "relmem._relmem.evaluation")


def module_name(path, package):
    parts = ["relmem", *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path, package):
    """Every module `path` imports, by absolute name; `from a import b` yields both a and a.b."""
    name = module_name(path, package)
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")[:len(here.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            yield str(node.args[0].value)


def core_imports_of_evaluation(package=PACKAGE):
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in OUTSIDE_THE_CORE:
            continue
        for imported in imported_modules(path, package):
            if any(imported == e or imported.startswith(e + ".") for e in EVALUATION):
                found.append(f"{path.relative_to(package).as_posix()} imports {imported}")
    return sorted(set(found))


def test_the_core_package_imports_no_evaluation_code():
    assert core_imports_of_evaluation() == []


def test_an_evaluation_import_in_the_core_is_caught(tmp_path):
    package = tmp_path / "relmem"
    for folder in ("agent", "eval", "bench", "hybrid"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "cli.py").write_text("from .eval import GoldSimulator\n")
    (package / "bench" / "swan.py").write_text("from ..eval import OracleFiller\n")
    (package / "hybrid" / "session.py").write_text("from .. import hybrid\nimport json\n")
    assert core_imports_of_evaluation(package) == []

    (package / "agent" / "runner.py").write_text("from ..eval.gold_simulator import GoldSimulator\n")
    (package / "agent" / "__init__.py").write_text("import importlib\nB = importlib.import_module('relmem.bench')\n")
    (package / "hybrid" / "__init__.py").write_text("from .._relmem import evaluation\n")
    (package / "llm.py").write_text("import relmem.eval\n")
    assert core_imports_of_evaluation(package) == [
        "agent/__init__.py imports relmem.bench",
        "agent/runner.py imports relmem.eval.gold_simulator",
        "agent/runner.py imports relmem.eval.gold_simulator.GoldSimulator",
        "hybrid/__init__.py imports relmem._relmem.evaluation",
        "llm.py imports relmem.eval",
    ]
