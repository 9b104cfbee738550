"""The C++ core's floors: a module includes only modules listed before it in CMakeLists.txt's RELMEM_MODULES (the
memories' parts, memories/text to memories/values, are floors of their own in the listed order)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'#include "relmem/([^"]+)"')


def floors():
    listed = re.search(r"set\(RELMEM_MODULES\n(.*?)\)", (ROOT / "CMakeLists.txt").read_text(), re.S).group(1).split()
    order = {}
    for folder in listed:
        top, _, sub = folder.partition("/")
        key = folder if top == "memories" and sub else top
        order.setdefault(key, len(order))
    return order


def floor_of(path, order):
    parts = path.split("/")
    if parts[0] == "memories" and len(parts) > 2 and f"memories/{parts[1]}" in order:
        return order[f"memories/{parts[1]}"]
    return order.get(parts[0])


def test_no_module_includes_one_listed_after_it():
    order = floors()
    upward = []
    for root in (ROOT / "cpp" / "include" / "relmem", ROOT / "cpp" / "src"):
        for source in sorted(root.rglob("*.[ch]pp")):
            here = floor_of(source.relative_to(root).as_posix(), order)
            for included in INCLUDE.findall(source.read_text(encoding="utf-8", errors="replace")):
                there = floor_of(included, order)
                if here is not None and there is not None and there > here:
                    upward.append(f"{source.relative_to(ROOT)} includes relmem/{included}")
    assert upward == []


def test_every_floor_is_known():
    order = floors()
    assert list(order)[:5] == ["common", "device", "linalg", "catalog", "sql"]
    assert order["memories/text"] < order["memories/selection"] < order["memories/training"] < order["llm"]
