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

__all__ = ["Memory", "RefreshReport", "DatabaseFile", "database_file", "plan_refresh"]


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
