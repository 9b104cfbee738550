"""The SWAN benchmark (Zhao et al.): 120 beyond-database questions over four BIRD databases whose answering columns
are removed. This module reads its files, builds the curated databases, declares the virtual columns that restore
the dropped ones, and translates its BlendSQL hybrid queries into relmem's SQL functions.

Layout of a SWAN folder: beyond-database-questions/<db>Queries.csv and <db>_HybridQueries.csv (db, question,
evidence, gold SQL, difficulty, HQDL or BlendSQL query; no header), databases/columns_to_drop.json,
databases/db_table_keys.json and databases/original/<db>/<db>.sqlite.
"""
import csv
import difflib
import json
import os
import re
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from .. import outputs
from .._relmem import Error

QUESTION_FILES = {
    "superhero": ("superheroQueries.csv", "superhero_HybridQueries.csv"),
    "formula_1": ("formula_1Queries.csv", "formula_1_HybridQueries.csv"),
    "european_football_2": ("european_football_2Queries.csv", "european_football_2_HybridQueries.csv"),
    "california_schools": ("CASchoolQueries.csv", "CASchool_HybridQueries.csv"),
}
MEANINGS_FILE = Path(__file__).resolve().parent.parent / "bench" / "data" / "swan_meanings.json"
_COLUMN = re.compile(r"(\w+)\.(`[^`]+`|\w+)")


@dataclass
class Question:
    id: str
    database: str
    question: str
    evidence: str
    gold_sql: str
    difficulty: str
    hqdl_sql: str
    hybrid_sql: str


@dataclass
class Dropped:
    """The dropped columns of one database, resolved against its original schema."""
    columns: dict = field(default_factory=dict)       # table -> [column] (partially dropped tables)
    tables: list = field(default_factory=list)        # tables with every column dropped
    notes: list = field(default_factory=list)         # entries that needed interpreting or name nothing


def original_path(swan_dir, database):
    return Path(swan_dir) / "databases" / "original" / database / f"{database}.sqlite"


def load_questions(swan_dir, databases=None):
    """The SWAN questions, ids '<db>/<n>', each with its gold, HQDL and BlendSQL queries."""
    folder = Path(swan_dir) / "beyond-database-questions"
    out = []
    for database, (plain, hybrid) in QUESTION_FILES.items():
        if databases and database not in databases:
            continue
        with open(folder / plain, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        with open(folder / hybrid, newline="", encoding="utf-8") as f:
            hybrid_rows = list(csv.reader(f))
        if len(rows) != len(hybrid_rows):
            raise Error(f"SWAN: {plain} and {hybrid} have different numbers of questions")
        for n, (row, hybrid_row) in enumerate(zip(rows, hybrid_rows)):
            out.append(Question(f"{database}/{n}", database, row[1], row[2], row[3], row[4], row[5], hybrid_row[5]))
    return out


def _tables(connection):
    return [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_%'")]


def _columns(connection, table):
    return [r[1] for r in connection.execute(f'PRAGMA table_info("{table}")')]


def _resolve(name, candidates):
    """`name` among `candidates` ignoring case, else the closest spelling; None when nothing is close."""
    lowered = {c.lower(): c for c in candidates}
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.7)
    return lowered[close[0]] if close else None


def read_dropped(swan_dir, database, connection):
    """columns_to_drop.json's entries for `database`, resolved against the original database. Entries joined by a
    missing comma are split; misspelled tables resolved to the closest name; names that match nothing are noted."""
    entries = json.loads((Path(swan_dir) / "databases" / "columns_to_drop.json").read_text())[database]
    tables = _tables(connection)
    wanted = {}
    dropped = Dropped()
    for entry in entries:
        parts = _COLUMN.findall(entry)
        if len(parts) > 1:
            dropped.notes.append(f"'{entry}' read as {len(parts)} entries (a comma is missing)")
        for table_name, column_name in parts:
            table = _resolve(table_name, tables)
            column = column_name.strip("`")
            if table is None:
                dropped.notes.append(f"{table_name}.{column}: no such table, nothing dropped")
                continue
            if table.lower() != table_name.lower():
                dropped.notes.append(f"{table_name}.{column}: read as table {table}")
            real = {c.lower(): c for c in _columns(connection, table)}.get(column.lower())
            if real is None:
                dropped.notes.append(f"{table}.{column}: no such column, nothing dropped")
                continue
            wanted.setdefault(table, []).append(real)
    for table, columns in wanted.items():
        if len(set(columns)) == len(_columns(connection, table)):
            dropped.tables.append(table)
        else:
            dropped.columns[table] = list(dict.fromkeys(columns))
    return dropped


def _index_columns(connection, index):
    return [row[2] for row in connection.execute(f'PRAGMA index_info("{index}")')]


def _rebuild_without(connection, table, drop):
    """Recreates `table` without the `drop` columns, keeping types, defaults, the primary key, foreign keys, UNIQUE
    constraints and indexes whose columns all remain."""
    info = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
    indexes = connection.execute(f'PRAGMA index_list("{table}")').fetchall()  # seq, name, unique, origin, partial
    unique = [_index_columns(connection, row[1]) for row in indexes if row[3] == "u"]
    created = [connection.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (row[1],))
               .fetchone()[0] for row in indexes if row[3] == "c" and not set(_index_columns(connection, row[1])) & drop]
    keep = [row for row in info if row[1] not in drop]
    pk = [row[1] for row in sorted(keep, key=lambda r: r[5]) if row[5]]
    parts = []
    for _, name, type_, notnull, default, _ in keep:
        column = f'"{name}" {type_}'
        if notnull:
            column += " NOT NULL"
        if default is not None:
            column += f" DEFAULT {default}"
        parts.append(column)
    if pk:
        parts.append("PRIMARY KEY (" + ", ".join(f'"{c}"' for c in pk) + ")")
    for columns in unique:
        if not set(columns) & drop:
            parts.append("UNIQUE (" + ", ".join(f'"{c}"' for c in columns) + ")")
    for row in connection.execute(f'PRAGMA foreign_key_list("{table}")').fetchall():
        if row[3] not in drop:
            target = f'("{row[4]}")' if row[4] else ""
            parts.append(f'FOREIGN KEY ("{row[3]}") REFERENCES "{row[2]}"{target}')
    names = ", ".join(f'"{row[1]}"' for row in keep)
    connection.execute(f'CREATE TABLE "{table}__curated" ({", ".join(parts)})')
    connection.execute(f'INSERT INTO "{table}__curated" ({names}) SELECT {names} FROM "{table}"')
    connection.execute(f'DROP TABLE "{table}"')
    connection.execute(f'ALTER TABLE "{table}__curated" RENAME TO "{table}"')
    for sql in created:
        connection.execute(sql)


def build_curated(swan_dir, database, out_dir, output_name="--out"):
    """Copies the original database into out_dir/<db>/<db>.sqlite without the dropped columns (tables whose every
    column is dropped are removed). The original is only read: an out_dir that is, holds or lies inside the SWAN
    folder is refused, and so is a curated file that exists from before this run. Returns (path, Dropped)."""
    source = original_path(swan_dir, database)
    if not source.is_file():
        raise Error(f"SWAN: no original database {source}")
    outputs.refuse_overlap(out_dir, {"--swan": str(swan_dir)}, output_name)
    target = Path(out_dir) / database / f"{database}.sqlite"
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as original:
        dropped = read_dropped(swan_dir, database, original)
    with outputs.new_file(target, output_name) as temporary:
        shutil.copyfile(source, temporary)
        os.chmod(temporary, 0o644)
        connection = sqlite3.connect(temporary)
        try:
            connection.execute("PRAGMA foreign_keys = OFF")
            for table in dropped.tables:
                connection.execute(f'DROP TABLE "{table}"')
            for table, columns in dropped.columns.items():
                _rebuild_without(connection, table, set(columns))
            connection.commit()
            connection.execute("VACUUM")
        finally:
            connection.close()
    return target, dropped


def table_keys(swan_dir, database):
    """db_table_keys.json for `database`: {table: [key columns]} with the backticks removed."""
    keys = json.loads((Path(swan_dir) / "databases" / "db_table_keys.json").read_text()).get(database, {})
    return {table: [k.strip("`") for k in spec.get("keys", [])] for table, spec in keys.items()}


def _fill_type(declared):
    t = (declared or "").upper()
    if "INT" in t:
        return "INTEGER"
    if any(word in t for word in ("REAL", "FLOA", "DOUB", "NUM", "DEC")):
        return "REAL"
    if "DATE" in t or "TIME" in t:
        return "DATE"
    return "TEXT"


def _first_text_column(connection, table, exclude=()):
    for _, name, type_, *_ in connection.execute(f'PRAGMA table_info("{table}")'):
        if name not in exclude and ("TEXT" in type_.upper() or "CHAR" in type_.upper()):
            return name
    return None


def _meaning(meanings, database, table, column):
    return meanings.get(f"{database}.{table}.{column}") or f"the {column.replace('_', ' ')} of the {table} row"


def declarations(swan_dir, database, dropped, meanings=None):
    """The virtual columns, relations and value tables that restore the dropped columns, declared from
    columns_to_drop.json, the original schema (types, foreign keys) and db_table_keys.json:
    - a table whose every column is dropped and which links two tables by foreign keys becomes a relation listed
      per row of the table with keys (hero_power: a superhero's powers, named by superpower.power_name);
    - any other fully dropped table becomes a value table of its labels (alignment: Good, Bad, ...);
    - a dropped foreign key becomes a reference column: the LLM names a label of the referenced table (the eye
      colour 'Blue') and the column holds its id; other dropped columns keep their original type."""
    meanings = meanings if meanings is not None else json.loads(MEANINGS_FILE.read_text())
    keys = table_keys(swan_dir, database)
    keyed = {t.lower(): t for t in keys}
    schema = {"tables": [], "relations": [], "value_tables": []}
    with sqlite3.connect(f"file:{original_path(swan_dir, database)}?mode=ro", uri=True) as original:
        fully_dropped = {t.lower() for t in dropped.tables}
        for table in dropped.tables:
            fks = original.execute(f'PRAGMA foreign_key_list("{table}")').fetchall()
            if len(fks) == 2:
                owner, target = sorted(fks, key=lambda fk: fk[2].lower() not in keyed)
                schema["relations"].append({
                    "name": table, "meaning": meanings.get(f"{database}.{table}", f"the {table} of the row"),
                    "owner": {"table": owner[2], "id": owner[4] or "id", "column": owner[3],
                              "keys": keys.get(keyed.get(owner[2].lower(), ""), [])},
                    "target": {"table": target[2], "id": target[4] or "id", "column": target[3],
                               "label": _first_text_column(original, target[2])}})
                continue
            label = _first_text_column(original, table)
            id_column = [r[1] for r in original.execute(f'PRAGMA table_info("{table}")') if r[5]]
            values = [r[0] for r in original.execute(
                f'SELECT "{label}" FROM "{table}" ORDER BY "{id_column[0] if id_column else "rowid"}"')]
            schema["value_tables"].append({"name": table, "id": id_column[0] if id_column else "id",
                                           "label": label, "values": values})
        for table, columns in dropped.columns.items():
            types = {r[1]: r[2] for r in original.execute(f'PRAGMA table_info("{table}")')}
            fks = {fk[3]: fk for fk in original.execute(f'PRAGMA foreign_key_list("{table}")')}
            declared = []
            for column in columns:
                spec = {"name": column, "type": _fill_type(types[column]),
                        "meaning": _meaning(meanings, database, table, column)}
                fk = fks.get(column)
                if fk is not None:
                    target = _resolve(fk[2], _tables(original))
                    dropped_there = set(dropped.columns.get(target, []))
                    label = _first_text_column(original, target, exclude=dropped_there)
                    if target and target.lower() in fully_dropped:
                        label = _first_text_column(original, target)
                    if target and label:
                        spec["references"] = {"table": target, "id": fk[4] or "id", "label": label}
                declared.append(spec)
            schema["tables"].append({"table": table, "keys": keys.get(keyed.get(table.lower(), ""), []),
                                     "columns": declared})
    return schema


_NO_SUCH_COLUMN = re.compile(r"no such column: (?:[^ .]+\.)?(\S+)")


def missing_dropped_column(schema, error, declared):
    """When a query failed with `error` because it reads a dropped column by name (a hybrid query filtering on
    Match.home_team_goal), `declared` (a schema) with that column of `schema` added as a virtual column; None when
    the error names no dropped column, or one already declared."""
    found = _NO_SUCH_COLUMN.search(error or "")
    if not found:
        return None
    name = found.group(1).strip('"`').lower()
    added = False
    out = {"tables": [dict(t, columns=list(t["columns"])) for t in declared.get("tables", [])],
           "relations": list(declared.get("relations", [])), "value_tables": list(declared.get("value_tables", []))}
    for table in schema["tables"]:
        for column in table["columns"]:
            if column["name"].lower() != name:
                continue
            target = next((t for t in out["tables"] if t["table"] == table["table"]), None)
            if target is None:
                target = dict(table, columns=[])
                out["tables"].append(target)
            if all(c["name"].lower() != name for c in target["columns"]):
                target["columns"].append(column)
                added = True
    return out if added else None


def oracle_source(swan_dir, database, schema, meanings=None):
    """What the oracle filler needs to answer for `database`: the original file, the dropped columns with their
    meanings (for SQL functions) and the key columns that identify rows."""
    dropped = {}
    for table in schema["tables"]:
        for column in table["columns"]:
            dropped[f"{table['table']}.{column['name']}"] = column["meaning"]
    for relation in schema["relations"]:
        dropped[relation["name"]] = relation["meaning"]
    keys = {table: cols for table, cols in table_keys(swan_dir, database).items() if cols}
    return {"database": database, "path": str(original_path(swan_dir, database)), "dropped": dropped, "keys": keys}
