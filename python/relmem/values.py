"""The data value memory: how each column stores its values, for linking questions and fixing SQL literals.

    memory = relmem.ValueMemory.build(catalog, encoder="use-lite", progress=True)   # bar over databases
    memory.lookup("restaurants", "restaurant", "city", "Los Angeles")   # [ValueMatch(value='LA', score=0.95, ...)]
    memory.link("restaurants", "Italian places in Los Angeles?")        # spans of the question that are values
    relmem.correct_values("SELECT ... WHERE city = 'Los Angeles'", "restaurants", memory, catalog)
"""
from ._relmem import Error
from ._relmem import values as _values
from .encoders import as_encoder
from .memory import Memory

# Typed results (attribute access): a stored value for a written one; a question span that matches a stored value
# (start/end index the question string); a string literal of a query, its check and its replacement.
ValueMatch = _values.ValueMatch
ValueLink = _values.ValueLink
ValueCondition = _values.ValueCondition
ValueCheck = _values.ValueCheck
ValueReplacement = _values.ValueReplacement
CorrectionResult = _values.CorrectionResult
KeyLookup = _values.KeyLookup
ColumnValues = _values.ColumnValues
MemoryUsage = _values.MemoryUsage
ValueAlias = _values.ValueAlias

CORRECTION_DEFAULTS = _values.CORRECTION_DEFAULTS  # min_confidence, min_score, min_margin, k of correct_values
# The calibrated replacement confidence (scripts/fit_value_confidence.py fits it): feature names, the model of an
# encoder's name, and the (features, gate) of replacing a written value by the first of its lookup candidates.
CONFIDENCE_FEATURES = _values.CONFIDENCE_FEATURES
confidence_model = _values.confidence_model
replacement_evidence = _values.replacement_evidence
value_conditions = _values.value_conditions
rewrite_string_literals = _values.rewrite_string_literals
normalize_value = _values.normalize_value
lexicon_info = _values.lexicon_info  # where the meaning channels come from, and which sources are missing


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
        return cls(_values.ValueMemory.build(catalog, as_encoder(encoder), progress=progress, **options))

    @classmethod
    def load(cls, folder, encoder=None):
        """Loads a saved memory; the encoder named in its manifest is loaded unless one is given."""
        if encoder is not None:
            encoder = as_encoder(encoder)
        return cls(_values.ValueMemory.load(str(folder), encoder))

    def save(self, folder):
        self._core.save(str(folder))

    def refresh(self, catalog, progress=False):
        """Re-indexes databases whose file changed (size or modification time), adds new ones, drops missing
        ones. Returns a RefreshReport (added, updated, removed, unchanged)."""
        return self._core.refresh(catalog, progress=progress)

    def add(self, catalog, db):
        """Indexes (or re-indexes) one database of `catalog`."""
        self._core.add_database(catalog, db)

    def remove(self, db):
        """Forgets one database; False when the memory did not hold it."""
        return self._core.remove_database(db)

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
        similar stored values; feedback is the text to hand an LLM ("" when every literal is stored). A server
        database's literals have the status its engine gives them (relmem.engines.value_checks)."""
        from .engines.value_checks import engine_checks
        checks, feedback = self._core.check_values(sql, db, catalog, k)
        return engine_checks(checks, feedback, catalog, db, self._similar(db, k))

    def feedback(self, sql, db, catalog, k=5):
        return self.check_values(sql, db, catalog, k)[1]

    def correct_values(self, sql, db, catalog, **thresholds):
        """Post-processing without an LLM. Returns a CorrectionResult (sql, replacements, lookups, checks):
        literals that their column does not store are replaced by the best of k (10) stored candidates when the
        calibrated confidence of that match (ValueReplacement.confidence) reaches min_confidence (by default the
        threshold of confidence_model(self.encoder.name)), it scores >= min_score (0.3) and beats the runner-up by
        >= min_margin (0.01); stored literals, LIKE patterns and weak matches are left as written. A literal compared
        with a foreign key (= or !=) whose referenced table stores it as written becomes a lookup of the keys
        instead (KeyLookup): "SourceAirport = 'Aberdeen'" reads every airport of Aberdeen."""
        from .engines.value_checks import engine_correction
        result = self._core.correct_values(sql, db, catalog, **thresholds)
        return engine_correction(result, catalog, db, self._similar(db, thresholds.get("k", CORRECTION_DEFAULTS["k"])))

    def _similar(self, db, k):
        return lambda table, column, text: self.lookup(db, table, column, text, k) if k > 0 else []

    def add_alias(self, db, table, column, written, stored, source="user", evidence=""):
        """Teaches the memory that `written` means the stored value `stored` in db.table.column: the next lookup
        of `written` there returns it first (channel "alias"). `source` and `evidence` are kept as provenance;
        adding it again counts a use. Raises relmem.Error when the column does not store `stored`."""
        return self._core.add_alias(db, table, column, str(written), str(stored), source, evidence)

    def remove_alias(self, db, table, column, written):
        """Forgets the alias of `written` in db.table.column; False when there was none."""
        return self._core.remove_alias(db, table, column, str(written))

    def aliases(self, db="", table="", column=""):
        """Learned aliases (ValueAlias: db, table, column, written, stored, source, evidence, created, uses),
        filtered by the names given."""
        return self._core.aliases(db, table, column)

    def save_aliases(self, folder):
        """Writes only the aliases file (aliases.json) of a saved memory's folder."""
        self._core.save_aliases(str(folder))

    def learn_from_correction(self, db, catalog, before_sql, after_sql, source="llm_correction", evidence="",
                              before_checks=None, after_checks=None):
        """Keeps as aliases the literals a value correction changed from a value its column does not store to one
        it stores (call it once the corrected query returned rows). Returns the aliases added. `before_checks` /
        `after_checks`: the ValueChecks of the two queries when already known (else they are computed)."""
        def statuses(sql, checks):
            checks = self.check_values(sql, db, catalog, k=0)[0] if checks is None else checks
            return {c.literal_index: c for c in checks}
        before, after = statuses(before_sql, before_checks), statuses(after_sql, after_checks)
        learned = []
        for index, new in after.items():
            old = before.get(index)
            if (old is None or old.value == new.value or new.op not in ("=", "!=", "IN", "NOT IN")
                    or (old.table, old.column) != (new.table, new.column)
                    or old.status != "not_found" or new.status != "found"):
                continue
            try:
                learned.append(self.add_alias(db, new.table, new.column, old.value, new.value, source,
                                              evidence or f"{before_sql} -> {after_sql}"))
            except Error:  # a value beyond the memory's per-column cap: nothing to point the alias at
                continue
        return learned

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
        """The fusion weights (see docs/values.md); assign a dict with some of the keys to change them."""
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
