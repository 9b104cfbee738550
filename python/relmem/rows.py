"""Row memory: example rows of every table, embedded so that the rows most relevant to a question can go into the
planning prompt next to their table ("2 rows from city: ...").

    rows = RowMemory.build(catalog)                      # the first `rows_per_table` rows of every table
    rows.search("concert_singer", "singers from France", ["singer"], k=2)   # {table: [RowMatch]}
    rows.save(folder); RowMemory.load(folder); rows.refresh(catalog)

A row is embedded from its text and key columns ("singer: Name Joe Sharp; Country Netherlands; Singer_ID 1"). Rows
are found by the values a question quotes, so the default encoder is the lexical hashing encoder: it matches words
and their character n-grams, and it embeds a whole collection's rows in seconds, where a sentence encoder would take
minutes. Each table keeps at most `rows_per_table` rows, the first ones SQLite returns; values are cut to
`max_value_chars` characters and BLOBs are left out.
"""
import hashlib
import json
import os
from dataclasses import dataclass

from . import Catalog, Error, VectorIndex
from .encoders import as_encoder
from .memory import DatabaseFile, Memory, database_file, plan_refresh
from .memory_files import atomic_folder, read_manifest
from .progress import callback as progress_callback

FORMAT_VERSION = 1
DEFAULT_ENCODER = "hashing:512"
TEXT_TYPES = ("CHAR", "CLOB", "TEXT")  # SQLite gives these text affinity


@dataclass(frozen=True)
class RowMatch:
    table: str
    columns: tuple   # the table's column names
    values: tuple    # one value per column (None for NULL and BLOBs)
    score: float     # cosine with the question

    def as_dict(self):
        return dict(zip(self.columns, self.values))


def _checksum(rows):
    """SHA-256 of the rows' canonical JSON: a changed byte in rows.json is found, not silently read."""
    return hashlib.sha256(json.dumps(rows, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class RowMemory(Memory):
    def __init__(self, encoder=None, rows_per_table=100, max_value_chars=40):
        self.encoder = as_encoder(encoder or None, DEFAULT_ENCODER)
        self.rows_per_table = rows_per_table
        self.max_value_chars = max_value_chars
        self.tables = {}   # database -> {table: (columns, [row values], first id)}
        self.indexes = {}  # database -> VectorIndex of its rows (ids: consecutive per table)
        self.files = {}    # database -> DatabaseFile the rows were read from

    @classmethod
    def build(cls, catalog, encoder=None, progress=False, rows_per_table=100, max_value_chars=40):
        """The rows of every table of every database of `catalog`, at most `rows_per_table` per table. `encoder`:
        an Encoder or a spec (default: hashing:512, see the module's text)."""
        if rows_per_table < 1:
            raise Error(f"rows_per_table must be at least 1, not {rows_per_table}")
        memory = cls(encoder, rows_per_table, max_value_chars)
        memory._add_databases(catalog, catalog.databases, progress_callback(progress, "row memory"))
        return memory

    def refresh(self, catalog, progress=False):
        """Re-reads the databases whose file changed, reads new ones and drops removed ones; a RefreshReport."""
        report, changed = plan_refresh(catalog, self.files)
        for db in report.removed:
            self.tables.pop(db, None)
            self.indexes.pop(db, None)
            self.files.pop(db, None)
        self._add_databases(catalog, changed, progress_callback(progress, "row memory refresh"))
        return report

    def _add_databases(self, catalog, databases, report):
        for done, db in enumerate(databases, 1):
            self._add(catalog, db)
            if report:
                report(db, done, len(databases))

    def _add(self, catalog, db):
        tables, texts = {}, []
        for table in catalog.schema(db).tables:
            columns = tuple(c.name for c in table.columns)
            rows = self._read_rows(catalog, db, table)
            tables[table.name] = (columns, rows, len(texts))
            embedded = [i for i, c in enumerate(table.columns) if _is_text(c.type) or c.primary_key] or \
                range(len(columns))
            texts += [f"{table.name}: " + "; ".join(f"{columns[i]} {row[i]}" for i in embedded if row[i] is not None)
                      for row in rows]
        index = VectorIndex(self.encoder.dim, "cosine")
        if texts:
            index.add(self.encoder.encode(texts), list(range(len(texts))))
        self.tables[db], self.indexes[db] = tables, index
        self.files[db] = database_file(catalog, db)

    def _read_rows(self, catalog, db, table):
        names = ", ".join(_quote(c.name) for c in table.columns)
        # The catalog's own file, as every memory reads it (a server database's snapshot), in SQLite's dialect.
        result = Catalog.execute(catalog, db, f"SELECT {names} FROM {_quote(table.name)} LIMIT {self.rows_per_table}",
                                 max_rows=self.rows_per_table)
        if not result.ok:
            raise Error(f"row memory: cannot read {db}.{table.name}: {result.error}")
        return [tuple(self._cell(v) for v in row) for row in result.rows]

    def _cell(self, value):
        if value is None or isinstance(value, (bytes, bytearray, memoryview)):
            return None
        if isinstance(value, str):
            return value[:self.max_value_chars]
        return value

    def encode(self, question):
        """The question as the row index reads it (one row vector); search_vector() takes it."""
        return self.encoder.encode([question])

    def search(self, db, question, tables, k=2, min_score=0.0):
        """{table: [RowMatch]} the k rows of each of `tables` most similar to the question, best first."""
        return self.search_vector(db, self.encode(question), tables, k, min_score)

    def search_vector(self, db, vector, tables, k=2, min_score=0.0):
        if db not in self.tables:
            raise Error(f"unknown database '{db}' in the row memory")
        out = {}
        for name in tables:
            if name not in self.tables[db]:
                raise Error(f"unknown table '{name}' of {db} in the row memory")
            columns, rows, first = self.tables[db][name]
            if not rows or k <= 0:
                out[name] = []
                continue
            scores, ids = self.indexes[db].search(vector, min(k, len(rows)), id_range=(first, first + len(rows)))
            out[name] = [RowMatch(name, columns, rows[i - first], float(s))
                         for s, i in zip(scores[0], ids[0]) if i >= 0 and s >= min_score]
        return out

    @property
    def memory_bytes(self):
        """Bytes of the vectors (with their ids) and of the stored values (as text)."""
        vectors = sum(len(index) for index in self.indexes.values()) * (4 * self.encoder.dim + 8)
        values = sum(len(str(v)) for tables in self.tables.values() for _, rows, _ in tables.values()
                     for row in rows for v in row)
        return vectors + values

    @property
    def databases(self):
        return sorted(self.tables)

    def __contains__(self, db):
        return db in self.tables

    def __len__(self):
        return len(self.tables)

    def __repr__(self):
        rows = sum(len(index) for index in self.indexes.values())
        return (f"RowMemory({len(self.tables)} databases, {rows} rows, at most {self.rows_per_table} per table, "
                f"encoder={self.encoder.name})")

    def save(self, folder):
        manifest = {"format": "relmem-rows", "version": FORMAT_VERSION, "encoder": self.encoder.name,
                    "rows_per_table": self.rows_per_table, "max_value_chars": self.max_value_chars,
                    "databases": {db: {"file": _file_record(self.files[db]),
                                       "tables": [[name, list(columns), [list(r) for r in rows]]
                                                  for name, (columns, rows, _) in tables.items()]}
                                  for db, tables in self.tables.items()}}
        manifest["checksum"] = _checksum(manifest["databases"])
        with atomic_folder(folder) as temporary:
            try:
                with open(os.path.join(temporary, "rows.json"), "w", encoding="utf-8") as f:
                    json.dump(manifest, f, ensure_ascii=False)
            except OSError as error:
                raise Error(f"cannot save the row memory to {folder}: {error.strerror}") from None
            for i, db in enumerate(sorted(self.tables)):
                self.indexes[db].save(os.path.join(temporary, f"{i}.index"))

    @classmethod
    def load(cls, folder, encoder=None):
        """Loads what save() wrote; the encoder is loaded by its saved name unless given (names must match)."""
        path = os.path.join(folder, "rows.json")
        manifest = read_manifest(path, "row memory", {"encoder": str, "rows_per_table": int, "max_value_chars": int,
                                                       "databases": dict, "checksum": str}, "relmem-rows", FORMAT_VERSION)
        if _checksum(manifest["databases"]) != manifest["checksum"]:
            raise Error(f"row memory file {path} is corrupt (checksum mismatch)")
        encoder = as_encoder(encoder if encoder is not None else manifest["encoder"] or None, DEFAULT_ENCODER)
        if encoder.name != manifest["encoder"]:
            raise Error(f"row memory {folder} was embedded with {manifest['encoder']}, not {encoder.name}")
        memory = cls(encoder, manifest["rows_per_table"], manifest["max_value_chars"])
        try:
            for i, (db, saved) in enumerate(sorted(manifest["databases"].items())):
                tables, first = {}, 0
                for name, columns, rows in saved["tables"]:
                    tables[name] = (tuple(columns), [tuple(r) for r in rows], first)
                    first += len(rows)
                index = VectorIndex.load(os.path.join(folder, f"{i}.index"))
                if len(index) != first:
                    raise Error(f"row memory {folder}: {len(index)} vectors for {first} rows of {db}")
                memory.tables[db], memory.indexes[db] = tables, index
                memory.files[db] = DatabaseFile(*saved["file"])
        except (KeyError, TypeError, ValueError) as error:
            raise Error(f"row memory {path}: bad record ({error})") from None
        return memory


def _file_record(file):
    return [file.path, file.size, file.mtime_ns]


def _is_text(declared_type):
    """Text affinity, or no declared type (whose values are often text)."""
    declared = declared_type.upper()
    return not declared or any(kind in declared for kind in TEXT_TYPES)


def _quote(name):
    return '"' + name.replace('"', '""') + '"'
