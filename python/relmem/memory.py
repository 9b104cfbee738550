"""The interface every memory built from a catalog shares: the selection memory (relmem.SelectionMemory), the value
memory (relmem.ValueMemory) and the example memory (relmem.examples.ExampleMemory).

    memory = Kind.build(catalog, encoder, progress=True)   # progress: False, True (a bar) or fn(db, done, total)
    memory.save(folder); memory = Kind.load(folder)         # the encoder is reloaded by name unless given
    report = memory.refresh(catalog)                        # RefreshReport: added, updated, removed, unchanged
    memory.memory_bytes                                     # bytes of what it stores

Results are typed objects with attribute access (DatabaseMatch, ValueMatch, ValueCheck, Example, ...).
"""
import abc
import json

from ._relmem import DatabaseFile, Error, RefreshReport, SelectionMemory, database_file, plan_refresh

__all__ = ["Memory", "RefreshReport", "DatabaseFile", "database_file", "plan_refresh", "read_manifest"]


def read_manifest(path, what, format_name, version):
    """The JSON object a Python memory saved at `path` ("format": format_name, "version": version); relmem.Error
    naming `what` ("example memory") when it cannot be read, is not JSON or is of another format or version."""
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except OSError as error:
        raise Error(f"cannot read {what} {path}: {error.strerror}") from None
    except ValueError as error:
        raise Error(f"{what} {path} is not valid JSON: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != format_name or manifest.get("version") != version:
        raise Error(f"{path} is not a relmem {what} of version {version}")
    return manifest


class Memory(abc.ABC):
    @classmethod
    @abc.abstractmethod
    def build(cls, catalog, encoder=None, progress=False, **options):
        """Builds the memory of every database of `catalog`."""

    @abc.abstractmethod
    def save(self, folder):
        """Writes the memory into `folder`."""

    @classmethod
    @abc.abstractmethod
    def load(cls, folder, encoder=None):
        """Reads what save() wrote."""

    @abc.abstractmethod
    def refresh(self, catalog, progress=False):
        """Brings the memory up to date with the catalog's files; returns a RefreshReport."""

    @property
    @abc.abstractmethod
    def memory_bytes(self):
        """Bytes of what the memory stores."""


Memory.register(SelectionMemory)  # a C++ class: it implements the interface without deriving from it
