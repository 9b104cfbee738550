"""The data value memory: how each column stores its values, for linking questions and fixing SQL literals.

    memory = relmem.ValueMemory.build(catalog, encoder="use-lite", progress=True)   # bar over databases
    memory.lookup("restaurants", "restaurant", "city", "Los Angeles")   # [ValueMatch(value='LA', score=0.95, ...)]
    memory.link("restaurants", "Italian places in Los Angeles?")        # spans of the question that are values
    relmem.correct_values("SELECT ... WHERE city = 'Los Angeles'", "restaurants", memory, catalog)
"""
from ._relmem import Encoder
from ._relmem import values as _values
from .encoders import load_encoder
from .memory import Memory

# Typed results (attribute access): a stored value for a written one; a question span that matches a stored value
# (start/end index the question string); a string literal of a query, its check and its replacement.
ValueMatch = _values.ValueMatch
ValueLink = _values.ValueLink
ValueCondition = _values.ValueCondition
ValueCheck = _values.ValueCheck
ValueReplacement = _values.ValueReplacement
CorrectionResult = _values.CorrectionResult
ColumnValues = _values.ColumnValues
MemoryUsage = _values.MemoryUsage

CORRECTION_DEFAULTS = _values.CORRECTION_DEFAULTS  # min_score, min_margin, k of correct_values
value_conditions = _values.value_conditions
rewrite_string_literals = _values.rewrite_string_literals
normalize_value = _values.normalize_value


def _encoder(encoder):
    if encoder is None or isinstance(encoder, str):
        return load_encoder(encoder)
    if isinstance(encoder, Encoder):
        return encoder
    raise TypeError(f"encoder must be a relmem.Encoder or an encoder name, not {type(encoder).__name__}")


class ValueMemory(Memory):
    """Per database and column: the distinct stored text values (lexical index + encoder vectors), and the range
    of numeric and date columns. Build it once per collection; refresh() re-reads only changed databases."""

    def __init__(self, core):
        self._core = core

    @classmethod
    def build(cls, catalog, encoder=None, progress=False, **options):
        """Indexes every database of `catalog`. `encoder`: a relmem.Encoder or a name ("use-lite", "hashing");
        None picks the default. `progress`: see relmem.progress. Options: max_values_per_column (10000),
        max_vectors_per_column (200), max_digit_share (0.5), max_value_chars (200), max_average_chars (100),
        encode_batch (4096)."""
        return cls(_values.ValueMemory.build(catalog, _encoder(encoder), progress=progress, **options))

    @classmethod
    def load(cls, folder, encoder=None):
        """Loads a saved memory; the encoder named in its manifest is loaded unless one is given."""
        if encoder is not None:
            encoder = _encoder(encoder)
        return cls(_values.ValueMemory.load(str(folder), encoder))

    def save(self, folder):
        self._core.save(str(folder))

    def refresh(self, catalog, progress=False):
        """Re-indexes databases whose file changed (size or modification time), adds new ones, drops missing
        ones. Returns a RefreshReport (added, updated, removed, unchanged)."""
        return self._core.refresh(catalog, progress=progress)

    def lookup(self, db, table, column, value, k=10):
        """The k stored values of db.table.column most similar to `value`, best first, as ValueMatch objects
        (value, score, components, table, column). Empty for columns without indexed text."""
        return self._core.lookup(db, table, column, str(value), k)

    def link(self, db, question, k=10, min_score=0.85, max_span_words=5):
        """Spans of `question` that match stored values anywhere in `db`, best first, as ValueLink objects (span,
        start, end and the match's value, score, components, table, column)."""
        return self._core.link(db, question, k, min_score, max_span_words)

    def link_all(self, dbs, question, k=10, min_score=0.85, max_span_words=5):
        """link() in each of `dbs` (one list per database, in order), encoding the question's spans once."""
        return self._core.link_all(list(dbs), question, k, min_score, max_span_words)

    def check_values(self, sql, db, catalog, k=5):
        """The database retriever: (checks, feedback). One ValueCheck per string literal compared with a column:
        status "found", "found_ignoring_case" or "not_found" (checked on the database itself), with the most
        similar stored values; feedback is the text to hand an LLM ("" when every literal is stored)."""
        return self._core.check_values(sql, db, catalog, k)

    def feedback(self, sql, db, catalog, k=5):
        return self.check_values(sql, db, catalog, k)[1]

    def correct_values(self, sql, db, catalog, **thresholds):
        """Post-processing without an LLM. Returns a CorrectionResult (sql, replacements, checks): literals that
        their column does not store are replaced by the best stored value when it scores >= min_score (default
        0.7) and beats the runner-up by >= min_margin (0.05) among k (10) candidates; stored literals, LIKE
        patterns and weak matches are left as written."""
        return self._core.correct_values(sql, db, catalog, **thresholds)

    def column(self, db, table, column):
        """What the memory keeps for one column (ColumnValues: kind, counts, range), or None."""
        return self._core.column(db, table, column)

    def columns(self, db):
        return self._core.columns(db)

    @property
    def databases(self):
        return self._core.databases

    @property
    def memory_usage(self):
        """MemoryUsage: bytes of strings, lexical structures and vectors, and their total."""
        return self._core.memory_usage

    @property
    def memory_bytes(self):
        return self._core.memory_bytes

    @property
    def encoder(self):
        return self._core.encoder

    @property
    def options(self):
        return self._core.options

    @property
    def weights(self):
        """The fusion weights (see the README); assign a dict with some of the keys to change them."""
        return self._core.weights

    @weights.setter
    def weights(self, values):
        self._core.weights = dict(values)

    def __contains__(self, db):
        return db in self._core

    def __len__(self):
        return len(self._core)

    def __repr__(self):
        return repr(self._core)


def correct_values(sql, db, value_memory, catalog, **thresholds):
    """LLM-free post-processing of a generated SQL query; see ValueMemory.correct_values."""
    return value_memory.correct_values(sql, db, catalog, **thresholds)
