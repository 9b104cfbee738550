"""Data factuality of filled values (after SWAN): precision, recall and F1 of the values an LLM filled against the
true values of the dropped columns in the original database.

Counted per filled value: a filled value is a prediction and a true value (for a row that was filled) is a fact,
unless it is NULL or empty text: an empty text states no fact, on either side (superhero's publisher 1 is named '',
and a filler that copies it states nothing). A prediction equal to its fact is correct: finite numbers within 1e-6
relative, anything else as text without case and surrounding space (so 'NAN', FC Nantes' short name, is text, not a
float NaN that equals nothing). A relation's list counts each listed label: predictions are the labels filled,
facts the true labels, correct the labels in both. precision = correct / predictions, recall = correct / facts, F1
their harmonic mean. Each column reports a few of its disagreements (key, filled, true).
"""
import json
import math
import sqlite3


MAX_EXAMPLES = 3


def stated(value):
    """The value as a fact: None for NULL and for text that is empty or only space."""
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def _number(value):
    """The value as a finite number, else None: texts such as 'NAN' (FC Nantes' short name) or 'Inf' stay text."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def same_value(filled, truth):
    a, b = _number(filled), _number(truth)
    if a is not None and b is not None:
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return str(filled).strip().casefold() == str(truth).strip().casefold()


def _scores(correct, predicted, facts):
    precision = correct / predicted if predicted else None
    recall = correct / facts if facts else None
    f1 = (2 * precision * recall / (precision + recall)) if precision and recall else 0.0 if predicted else None
    return {"precision": precision, "recall": recall, "f1": f1, "correct": correct, "predicted": predicted,
            "facts": facts}


class _Original:
    def __init__(self, path):
        self.connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.indexes = {}

    def row(self, table, key):
        """The first rowid whose key columns hold `key`'s values (one scan per table and key columns)."""
        columns = tuple(key)
        index = self.indexes.get((table, columns))
        if index is None:
            names = ", ".join(f'"{c}"' for c in columns)
            index = {}
            for rowid, *values in self.connection.execute(f'SELECT rowid, {names} FROM "{table}" ORDER BY rowid'):
                index.setdefault(tuple(values), rowid)
            self.indexes[(table, columns)] = index
        return index.get(tuple(key.values()))

    def value(self, table, rowid, column):
        return self.connection.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()[0]

    def label(self, table, id_column, label, value):
        found = self.connection.execute(f'SELECT "{label}" FROM "{table}" WHERE "{id_column}" = ?', (value,)).fetchone()
        return found[0] if found else None

    def listed(self, relation, owner, target, rowid):
        owner_id = self.value(owner["table"], rowid, owner["id"])
        rows = self.connection.execute(
            f'SELECT t."{target["label"]}" FROM "{relation}" r JOIN "{target["table"]}" t ON r."{target["column"]}" = '
            f't."{target["id"]}" WHERE r."{owner["column"]}" = ?', (owner_id,)).fetchall()
        return {str(r[0]).casefold() for r in rows if stated(r[0]) is not None}


def _scope_target(scope, database):
    """'column:db.table.col#h|keys' -> ('column', table, col); 'relation:db.name#h|keys' -> ('relation', name, None)."""
    kind, rest = scope.split(":", 1)
    if not rest.startswith(database + "."):
        return None
    body = rest[len(database) + 1:].rsplit("#", 1)[0]
    if kind == "relation":
        return kind, body, None
    table, _, column = body.partition(".")
    return kind, table, column


def measure(store, database, original_path, schema):
    """Factuality of every column and relation of `schema` filled in `store` for `database`: overall and per
    column. `schema` as declared (HybridSession.schema)."""
    original = _Original(original_path)
    columns = {(t["table"].lower(), c["name"].lower()): c for t in schema["tables"] for c in t["columns"]}
    relations = {r["name"].lower(): r for r in schema["relations"]}
    per_target, examples = {}, {}
    for scope in store.scopes():
        target = _scope_target(scope, database)
        if target is None:
            continue
        kind, table, column = target
        name = f"{table}.{column}" if column else table
        counts = per_target.setdefault(name, [0, 0, 0])
        wrong = examples.setdefault(name, [])
        for key_text, filled in store.values(scope).items():
            key = json.loads(key_text)
            if kind == "relation":
                relation = relations.get(table.lower())
                if relation is None:
                    continue
                rowid = original.row(relation["owner"]["table"], key)
                truth = original.listed(relation["name"], relation["owner"], relation["target"], rowid) \
                    if rowid is not None else set()
                predicted = {str(v).casefold() for v in (filled or []) if stated(v) is not None}
                counts[0] += len(predicted & truth)
                counts[1] += len(predicted)
                counts[2] += len(truth)
                if predicted != truth and len(wrong) < MAX_EXAMPLES:
                    wrong.append({"key": key, "filled": sorted(predicted - truth), "missed": sorted(truth - predicted)})
                continue
            spec = columns.get((table.lower(), column.lower()))
            if spec is None:
                continue
            rowid = original.row(table, key)
            truth = original.value(table, rowid, column) if rowid is not None else None
            if truth is not None and spec.get("references"):
                ref = spec["references"]
                truth = original.label(ref["table"], ref["id"], ref["label"], truth)
            filled, truth = stated(filled), stated(truth)
            correct = filled is not None and truth is not None and same_value(filled, truth)
            counts[0] += correct
            counts[1] += filled is not None
            counts[2] += truth is not None
            if not correct and (filled, truth) != (None, None) and len(wrong) < MAX_EXAMPLES:
                wrong.append({"key": key, "filled": filled, "true": truth})
    total = [sum(c[i] for c in per_target.values()) for i in range(3)]
    out = _scores(*total)
    out["by_column"] = {name: dict(_scores(*c), disagreements=examples[name]) for name, c in sorted(per_target.items())}
    return out


def combine(reports):
    """Overall scores of several measure() reports (e.g. one per database)."""
    total = [sum(r[k] for r in reports) for k in ("correct", "predicted", "facts")]
    return _scores(*total)
