"""The memories a pipeline draws on, built together from a catalog or saved to and loaded from one folder:

    MEMDIR/manifest.json   encoder, databases, descriptions
    MEMDIR/selection/      database selection memory
    MEMDIR/values/         data value memory
    MEMDIR/examples/       example memory (question-SQL pairs and terminology)
    MEMDIR/rows/           row memory (example rows of every table)
"""
import json
import os
from dataclasses import dataclass, field
from typing import Optional

from .. import Error, _relmem
from ..encoders import as_encoder
from ..examples import ExampleMemory
from ..memory_files import atomic_folder, read_manifest
from ..rows import RowMemory
from ..values import ValueMemory

FORMAT_VERSION = 1
SelectionMemory = _relmem.SelectionMemory


@dataclass
class Memories:
    encoder: object
    selection: object
    values: Optional[object] = None
    examples: Optional[ExampleMemory] = None
    descriptions: dict = field(default_factory=dict)
    rows: Optional[RowMemory] = None

    @classmethod
    def build(cls, catalog, encoder=None, descriptions=None, examples=(), values=True, progress=False,
              rows_per_table=100):
        """Embeds every database of `catalog`: selection memory, value memory (unless values=False), an example
        memory of `examples` (Example objects or records) and a row memory of at most `rows_per_table` rows per
        table (0: none). `encoder`: an Encoder, a spec string or None (the default encoder; the row memory has its
        own lexical one). With progress=True, progress bars go to stderr."""
        encoder = as_encoder(encoder)
        descriptions = dict(descriptions or {})
        selection = SelectionMemory.build(catalog, encoder, descriptions=descriptions, progress=progress)
        value_memory = ValueMemory.build(catalog, encoder, progress=progress) if values else None
        example_memory = ExampleMemory.build(catalog, encoder, progress=progress, examples=examples)
        rows = RowMemory.build(catalog, progress=progress, rows_per_table=rows_per_table) if rows_per_table else None
        return cls(encoder, selection, value_memory, example_memory, descriptions, rows)

    def save(self, folder):
        """Writes every memory into a new folder renamed onto `folder` once complete: a failed save leaves the
        memory that was there as it was."""
        with atomic_folder(folder) as temporary:
            self.selection.save(os.path.join(temporary, "selection"))
            if self.values is not None:
                self.values.save(os.path.join(temporary, "values"))
            if self.examples is not None:
                self.examples.save(os.path.join(temporary, "examples"))
            if self.rows is not None:
                self.rows.save(os.path.join(temporary, "rows"))
            manifest = {"format": "relmem-memory", "version": FORMAT_VERSION, "encoder": self.encoder.name,
                        "databases": self.selection.databases, "descriptions": self.descriptions,
                        "values": self.values is not None, "examples": self.examples is not None,
                        "rows": self.rows is not None}
            try:
                with open(os.path.join(temporary, "manifest.json"), "w", encoding="utf-8") as f:
                    json.dump(manifest, f, ensure_ascii=False, indent=1)
            except OSError as error:
                raise Error(f"cannot save the memory manifest in {folder}: {error.strerror}") from None

    @classmethod
    def load(cls, folder, encoder=None):
        """Loads what save() wrote. The encoder is loaded by the name in the manifest unless given."""
        path = os.path.join(folder, "manifest.json")
        if not os.path.exists(path):
            raise Error(f"no relmem memory in {folder}: {path} is missing; "
                        f"build one with `relmem index --dbs DIR --out {folder}`")
        manifest = read_manifest(path, "memory manifest", {
            "format": str, "version": int, "encoder": str, "databases": list, "descriptions": dict,
            "values": bool, "examples": bool}, "relmem-memory", FORMAT_VERSION)
        if not all(isinstance(v, str) for v in manifest["descriptions"].values()):
            raise Error(f"memory manifest {path}: 'descriptions' must map database names to text")
        encoder = as_encoder(encoder, manifest["encoder"])
        selection = SelectionMemory.load(os.path.join(folder, "selection"), encoder)
        values = ValueMemory.load(os.path.join(folder, "values"), encoder) if manifest.get("values") else None
        examples = (ExampleMemory.load(os.path.join(folder, "examples"), encoder) if manifest.get("examples")
                    else ExampleMemory(encoder))
        rows = RowMemory.load(os.path.join(folder, "rows")) if manifest.get("rows") is True else None
        return cls(encoder, selection, values, examples, manifest.get("descriptions") or {}, rows)

    def __repr__(self):
        return (f"Memories(encoder={self.encoder.name}, selection of {len(self.selection)} databases, "
                f"values of {len(self.values) if self.values is not None else 0} databases, "
                f"{len(self.examples) if self.examples is not None else 0} examples, "
                f"rows of {len(self.rows) if self.rows is not None else 0} databases)")

    def check_catalog(self, catalog):
        """Raises relmem.Error when the memory does not cover the catalog's databases (built for another folder)."""
        missing = sorted(set(catalog.databases) - set(self.selection.databases))
        if missing:
            raise Error(f"the memory does not cover {len(missing)} database(s) of the folder "
                        f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); rebuild it with "
                        "`relmem index`")
