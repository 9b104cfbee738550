"""Evaluation items: one JSON object per line of a set file.

    {"id": "single-0007", "kind": "single", "question": "...", "databases": ["concert_singer"],
     "parts": [{"question": "...", "database": "concert_singer", "sql": "SELECT ...", "rows": [[...]],
                "ordered": false}],
     "answer": {"type": "rows"}, "source": "spider/dev.json#12"}

kind: "zero" (no database), "single", "double" (the paper's comparison of two databases), "multi" (2-3
questions on different databases, concatenated) or "value" (a single-database question whose literal is written
otherwise than the database stores it). answer.type: "text" (accepted: [...]), "choice" (choices:
{label: text}, key), "rows" (the single part's rows), "larger" (question: the 1-based part with the larger number)
or "parts" (every part's rows stated).
"""
import json
from dataclasses import asdict, dataclass, field
from typing import List

from .. import Error, outputs

KINDS = ("zero", "single", "double", "multi", "value")
ANSWER_TYPES = ("text", "choice", "rows", "larger", "parts")


@dataclass
class Part:
    question: str
    database: str
    sql: str
    rows: list
    ordered: bool = False


@dataclass
class Item:
    id: str
    kind: str
    question: str
    answer: dict
    parts: List[Part] = field(default_factory=list)
    source: str = ""

    @property
    def databases(self):
        return [part.database for part in self.parts]

    @property
    def group(self):
        """The report's row: the kind, with multi-part questions split by their number of parts."""
        return f"multi-{len(self.parts)}" if self.kind == "multi" else self.kind

    def to_dict(self):
        data = asdict(self)
        data["databases"] = self.databases
        return data

    @classmethod
    def from_dict(cls, data):
        try:
            item = cls(str(data["id"]), data["kind"], data["question"], dict(data["answer"]),
                       [Part(**part) for part in data.get("parts", [])], data.get("source", ""))
        except (KeyError, TypeError, ValueError) as error:
            raise Error(f"not an evaluation item ({type(error).__name__}: {error})") from None
        if item.kind not in KINDS or item.answer.get("type") not in ANSWER_TYPES:
            raise Error(f"item {item.id}: unknown kind {item.kind!r} or answer type {item.answer.get('type')!r}")
        if (item.kind == "zero") != (not item.parts):
            raise Error(f"item {item.id}: a {item.kind} item must {'not ' if item.kind == 'zero' else ''}have parts")
        return item


def write_set(items, path):
    """Writes a new set file (relmem.outputs: never over a file this run did not create)."""
    outputs.write_file(path, "".join(json.dumps(item.to_dict(), ensure_ascii=False, default=str) + "\n"
                                     for item in items))


def load_set(path):
    """The items of a set file; a clear relmem.Error names the first bad line."""
    items = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    items.append(Item.from_dict(json.loads(line)))
                except (ValueError, Error) as error:
                    raise Error(f"{path}, line {number}: {error}") from None
    except OSError as error:
        raise Error(f"cannot read evaluation set {path}: {error.strerror}") from None
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise Error(f"{path}: item ids must be unique")
    if not items:
        raise Error(f"{path} holds no evaluation items")
    return items
