"""The C++ core's floors: a module includes only modules listed before it in CMakeLists.txt's RELMEM_MODULES (the
memories' parts, memories/text to memories/values, are floors of their own in the listed order). The evaluation
tools (RELMEM_EVALUATION_MODULES, built as relmem_evaluation) stand above the whole core: no core file includes
them, by "relmem/..." or by a relative path."""
import os
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'#include "([^"]+)"')


def module_list(name, root=ROOT):
    listing = re.search(rf"set\({name}\n(.*?)\)", (root / "CMakeLists.txt").read_text(), re.S)
    return listing.group(1).split()


def floors(root=ROOT):
    order = {}
    for folder in module_list("RELMEM_MODULES", root) + module_list("RELMEM_EVALUATION_MODULES", root):
        top, _, sub = folder.partition("/")
        key = folder if top == "memories" and sub else top
        order.setdefault(key, len(order))
    return order


def floor_of(path, order):
    parts = path.split("/")
    if parts[0] == "memories" and len(parts) > 2 and f"memories/{parts[1]}" in order:
        return order[f"memories/{parts[1]}"]
    return order.get(parts[0])


def includes(root=ROOT):
    """(file relative to root, module path it lives at, module path of each relmem file it includes)."""
    for tree in (root / "cpp" / "include" / "relmem", root / "cpp" / "src"):
        for source in sorted(tree.rglob("*.[ch]pp")):
            here = source.relative_to(tree).as_posix()
            for included in INCLUDE.findall(source.read_text(encoding="utf-8", errors="replace")):
                if included.startswith("relmem/"):
                    yield source.relative_to(root), here, included[len("relmem/"):]
                    continue
                resolved = Path(os.path.normpath(source.parent / included))
                if resolved.is_relative_to(tree):
                    yield source.relative_to(root), here, resolved.relative_to(tree).as_posix()


def upward_includes(root=ROOT):
    order = floors(root)
    upward = []
    for source, here, there in includes(root):
        if floor_of(here, order) is not None and floor_of(there, order) is not None:
            if floor_of(there, order) > floor_of(here, order):
                upward.append(f"{source} includes {there}")
    return upward


def core_includes_of_evaluation(root=ROOT):
    evaluation = set(module_list("RELMEM_EVALUATION_MODULES", root))
    in_evaluation = lambda path: any(path == m or path.startswith(m + "/") for m in evaluation)
    return [f"{source} includes {there}" for source, here, there in includes(root)
            if not in_evaluation(here) and in_evaluation(there)]


def test_no_module_includes_one_listed_after_it():
    assert upward_includes() == []


def test_every_floor_is_known():
    order = floors()
    assert list(order)[:5] == ["common", "device", "linalg", "catalog", "sql"]
    assert order["memories/text"] < order["memories/selection"] < order["memories/training"] < order["llm"]
    assert list(order)[-1] == "evaluation"


def test_the_core_library_compiles_no_evaluation_tool():
    core, evaluation = module_list("RELMEM_MODULES"), module_list("RELMEM_EVALUATION_MODULES")
    assert evaluation == ["evaluation"] and not set(core) & set(evaluation)
    assert (ROOT / "cpp" / "src" / "evaluation" / "oracle_filler.cpp").is_file()
    assert not list((ROOT / "cpp" / "src" / "hybrid").glob("oracle_*"))


def test_the_core_includes_no_evaluation_tool():
    assert core_includes_of_evaluation() == []


def test_a_core_file_including_an_evaluation_tool_is_caught(tmp_path):
    shutil.copy(ROOT / "CMakeLists.txt", tmp_path / "CMakeLists.txt")
    for folder in ("cpp/src/hybrid", "cpp/src/llm", "cpp/src/evaluation", "cpp/include/relmem/evaluation"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "cpp/src/evaluation/oracle_source.hpp").write_text('#include "relmem/hybrid/filler.hpp"\n')
    (tmp_path / "cpp/src/evaluation/oracle_filler.cpp").write_text('#include "../hybrid/text.hpp"\n')
    assert core_includes_of_evaluation(tmp_path) == [] and upward_includes(tmp_path) == []

    (tmp_path / "cpp/src/hybrid/filler.cpp").write_text('#include "relmem/evaluation/oracle_filler.hpp"\n')
    (tmp_path / "cpp/src/llm/chat.cpp").write_text('#include "../evaluation/oracle_source.hpp"\n')
    caught = ["cpp/src/hybrid/filler.cpp includes evaluation/oracle_filler.hpp",
              "cpp/src/llm/chat.cpp includes evaluation/oracle_source.hpp"]
    assert core_includes_of_evaluation(tmp_path) == caught
    assert upward_includes(tmp_path) == caught
