"""Hybrid queries: answers that need facts the databases lack.

A HybridSession opens one database read-only and extends it with *virtual columns* (new columns of existing tables
that an LLM fills per row, keyed by the row's key columns), *relations* (many-to-many links the LLM lists per row)
and *value tables* (small fixed tables), and with LLM functions inside SQL:

    llm_map(instruction, value, ...)            row-wise answer         llm_map_in(instruction, domain, value, ...)
    llm_qa(instruction, value, ...) aggregate   one answer per group    llm_qa_in(instruction, domain, value, ...)
    llm_match(instruction, value, domain)       the domain value naming the same thing (fuzzy joins)

A domain is a stored column ('table.column') or a fixed list ('a;b;c'). Every filled value is kept with its
provenance in a FillStore (relmem's own SQLite file; the user's database is never written), so later questions
needing the same rows pay no tokens. In ``lazy`` mode only the rows a query reaches are filled; ``whole`` (HQDL)
fills a touched column for every row.

    from relmem import hybrid, llm
    store = hybrid.FillStore("fills.sqlite")
    session = hybrid.session("formula_1", "formula_1.sqlite", declarations, llm=model, store=store)
    result, stats = session.execute("SELECT forename FROM drivers WHERE nationality = 'German'")
"""
from .._relmem import hybrid as _core
from ..llm import as_llm

FillStore = _core.FillStore
Filler = _core.Filler
HybridSession = _core.HybridSession

STAGES = ("hybrid", "hybrid_fill", "hybrid_map", "hybrid_qa", "hybrid_match")


def session(database, path, schema, llm, store, mode="lazy", batch_size=40, **options):
    """A HybridSession over `path` with `schema` ({"tables": [...], "relations": [...], "value_tables": [...]}),
    filling through `llm` (any relmem LLM or callable) into `store` (a FillStore or a path)."""
    if not isinstance(store, FillStore):
        store = FillStore(str(store))
    filler = Filler(as_llm(llm), store, batch_size=batch_size)
    return HybridSession(database, str(path), schema, filler, mode=mode, **options)


__all__ = ["FillStore", "Filler", "HybridSession", "STAGES", "session"]
