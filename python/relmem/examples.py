"""Example memory (FATO-SQL style): question-SQL pairs and domain terminology, embedded, so that the ones similar
to a new question can go into the planning prompt as few-shot examples.

    memory = ExampleMemory.build(catalog, encoder, examples=load_records("examples.jsonl"))
    memory.add_example("How many Italian restaurants are in LA?", "SELECT COUNT(*) FROM restaurant WHERE ...",
                       "restaurants")
    memory.add_term("R&D", "the research and development department, stored as dept_name 'R&D'")
    memory.search("Number of Italian places in Los Angeles", k=3, min_score=0.6)   # [(Example, cosine)]
    memory.save(folder); ExampleMemory.load(folder)
    memory.refresh(catalog)   # drops the examples of removed databases, and those whose SQL no longer fits a
                              # changed database's schema

Records on disk (load_records): a JSON list or JSON lines, each {"question", "sql", "database"} or
{"term", "definition"}.
"""
import json
import os
from collections import defaultdict
from dataclasses import asdict, dataclass

import numpy as np

from . import Error, VectorIndex
from . import sql as sqltools
from .encoders import as_encoder
from .memory import DatabaseFile, Memory, database_file, plan_refresh
from .memory_files import atomic_folder, read_manifest
from .progress import callback as progress_callback

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Example:
    kind: str  # "sql" (a question with its SQL) or "term" (domain terminology)
    question: str = ""
    sql: str = ""
    database: str = ""
    term: str = ""
    definition: str = ""

    @property
    def text(self):
        """What is embedded: the question, or the term with its definition."""
        return self.question if self.kind == "sql" else f"{self.term}: {self.definition}"

    def to_dict(self):
        return {k: v for k, v in asdict(self).items() if v}

    @classmethod
    def from_record(cls, record):
        if not isinstance(record, dict):
            raise Error(f"an example must be an object, got {record!r}")
        if record.get("question") and record.get("sql"):
            return cls("sql", question=str(record["question"]), sql=str(record["sql"]),
                       database=str(record.get("database", "")))
        if record.get("term") and record.get("definition"):
            return cls("term", term=str(record["term"]), definition=str(record["definition"]))
        raise Error(f"an example needs 'question' and 'sql', or 'term' and 'definition': {record!r}")


class ExampleMemory(Memory):
    def __init__(self, encoder=None):
        self.encoder = as_encoder(encoder)
        self.examples = []
        self.index = VectorIndex(self.encoder.dim, "cosine")
        self.files = {}  # database -> DatabaseFile of the catalog the examples were last checked against

    @classmethod
    def build(cls, catalog, encoder=None, progress=False, examples=()):
        """An example memory of `examples` (Example objects or records) for `catalog`'s databases, embedded one
        database at a time (`progress`: see relmem.progress). An example naming a database the catalog lacks is an
        error."""
        memory = cls(encoder)
        examples = [e if isinstance(e, Example) else Example.from_record(e) for e in examples]
        unknown = sorted({e.database for e in examples if e.database and e.database not in catalog})
        if unknown:
            raise Error(f"examples name databases the catalog lacks: {', '.join(unknown)}")
        memory.files = {db: database_file(catalog, db) for db in catalog.databases}
        by_database = defaultdict(list)
        for example in examples:
            by_database[example.database].append(example)
        report = progress_callback(progress, "example memory")
        for done, (db, group) in enumerate(by_database.items(), 1):
            memory.add(group)
            if report:
                report(db, done, len(by_database))
        return memory

    def refresh(self, catalog, progress=False):
        """Drops the examples of databases the catalog lacks, and the SQL examples of changed databases (their
        file's size or modification time) that the new schema no longer fits (an error-level diagnostic of
        relmem.sql.inspect); returns a RefreshReport."""
        report, changed = plan_refresh(catalog, self.files)
        removed = set(report.removed)
        stale = {i for i, e in enumerate(self.examples) if e.database in removed or
                 (e.database in changed and e.kind == "sql" and not _fits(e, catalog))}
        if stale:
            kept = [i for i in range(len(self.examples)) if i not in stale]
            vectors = np.array([self.index.reconstruct(i) for i in kept], dtype=np.float32)
            self.index = VectorIndex(self.encoder.dim, "cosine")
            if kept:
                self.index.add(vectors.reshape(len(kept), self.encoder.dim), list(range(len(kept))))
            self.examples = [self.examples[i] for i in kept]
        self.files = {db: database_file(catalog, db) for db in catalog.databases}
        update = progress_callback(progress, "example memory refresh")
        for done, db in enumerate(changed, 1):
            if update:
                update(db, done, len(changed))
        return report

    @property
    def memory_bytes(self):
        """Bytes of the vectors (with their ids) and the example texts."""
        texts = sum(len(value) for e in self.examples for value in asdict(e).values())
        return len(self.index) * (4 * self.encoder.dim + 8) + texts

    def add(self, examples):
        """Adds Example objects or records (dicts); embeds them in one encoder call."""
        examples = [e if isinstance(e, Example) else Example.from_record(e) for e in examples]
        if examples:
            first = len(self.examples)
            self.index.add(self.encoder.encode([e.text for e in examples]),
                           list(range(first, first + len(examples))))
            self.examples.extend(examples)
        return len(examples)

    def add_example(self, question, sql, database=""):
        self.add([Example("sql", question=question, sql=sql, database=database)])

    def add_term(self, term, definition):
        self.add([Example("term", term=term, definition=definition)])

    def search(self, text, k=3, min_score=0.6):
        """[(Example, cosine similarity)] of the k most similar examples scoring at least `min_score`, best first."""
        if not self.examples or k <= 0:
            return []
        scores, ids = self.index.search(self.encoder.encode([text]), min(k, len(self.examples)))
        return [(self.examples[i], float(s)) for s, i in zip(scores[0], ids[0]) if i >= 0 and s >= min_score]

    def save(self, folder):
        manifest = {"format": "relmem-examples", "version": FORMAT_VERSION, "encoder": self.encoder.name,
                    "dim": self.encoder.dim, "examples": [e.to_dict() for e in self.examples],
                    "files": {db: [f.path, f.size, f.mtime_ns] for db, f in self.files.items()}}
        with atomic_folder(folder) as temporary:
            try:
                with open(os.path.join(temporary, "examples.json"), "w", encoding="utf-8") as f:
                    json.dump(manifest, f, ensure_ascii=False, indent=1)
            except OSError as error:
                raise Error(f"cannot save the example memory to {folder}: {error.strerror}") from None
            self.index.save(os.path.join(temporary, "examples.index"))

    @classmethod
    def load(cls, folder, encoder=None):
        """Loads a saved memory; the encoder is loaded by the name saved with it unless given (names must match)."""
        path = os.path.join(folder, "examples.json")
        manifest = read_manifest(path, "example memory", {"format": str, "version": int, "encoder": str,
                                                          "examples": list}, "relmem-examples", FORMAT_VERSION)
        encoder = as_encoder(encoder, manifest["encoder"])
        if encoder.name != manifest["encoder"]:
            raise Error(f"example memory {folder} was embedded with {manifest['encoder']}, not {encoder.name}")
        memory = cls(encoder)
        try:
            memory.examples = [Example(**record) for record in manifest["examples"]]
            memory.files = {db: DatabaseFile(*file) for db, file in dict(manifest.get("files", {})).items()}
        except (TypeError, ValueError) as error:
            raise Error(f"example memory {path}: bad example record ({error})") from None
        memory.index = VectorIndex.load(os.path.join(folder, "examples.index"))
        if len(memory.index) != len(memory.examples):
            raise Error(f"example memory {folder}: {len(memory.index)} vectors for {len(memory.examples)} examples")
        return memory

    def __len__(self):
        return len(self.examples)

    def __repr__(self):
        return f"ExampleMemory({len(self.examples)} examples, encoder={self.encoder.name})"


def load_records(path):
    """Example records from a JSON list or a JSON-lines file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as error:
        raise Error(f"cannot read examples {path}: {error.strerror}") from None
    try:
        data = json.loads(text)
        records = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as error:
            raise Error(f"examples {path}: neither a JSON list nor JSON lines ({error})") from None
    return [Example.from_record(record) for record in records]


def _fits(example, catalog):
    """Whether an SQL example still parses and names only tables and columns of its database."""
    try:
        return not any(d.severity == "error" for d in sqltools.inspect(example.sql, catalog, example.database))
    except Error:
        return False
